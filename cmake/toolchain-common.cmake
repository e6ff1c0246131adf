# Shared by cmake/toolchain-<arch>.cmake: build libcn for another Debian
# architecture with Debian's cross compiler (gcc-<triplet>, whose libc is
# libc6-dev-<arch>-cross) against that architecture's multiarch libraries
# (libnl-3-dev:<arch>, libcmocka-dev:<arch> in /usr/lib/<multiarch>).
# The including file sets CN_CROSS_TRIPLET (the compiler's prefix),
# CN_CROSS_MULTIARCH (Debian's multiarch directory), CMAKE_SYSTEM_PROCESSOR
# CN_CROSS_QEMU (the qemu-user-static program that runs its binaries) and
# CN_CROSS_LOADER (its dynamic loader, from libc6:<arch>).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${CN_CROSS_TRIPLET}-gcc)
# find_library and find_path look in /usr/lib/<multiarch> (never the build
# machine's /usr/lib/x86_64-linux-gnu); programs are the build machine's.
set(CMAKE_LIBRARY_ARCHITECTURE ${CN_CROSS_MULTIARCH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config reads the target's .pc files only (the toolchain file is read
# again by every configure, so the variable is set for each run of cmake).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${CN_CROSS_MULTIARCH}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# CTest runs the test programs through cmake/cross-exec: by themselves
# where this machine runs them, else under qemu-user-static. CN_CROSS_EMULATOR
# replaces it (empty: run them directly).
if(DEFINED CN_CROSS_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CN_CROSS_EMULATOR})
else()
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/cross-exec ${CN_CROSS_QEMU}
      ${CN_CROSS_LOADER})
endif()
