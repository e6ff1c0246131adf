# Debian i386: cmake -B build-i386 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-i386.cmake
# Needs gcc-i686-linux-gnu, libc6-dev-i386-cross, and libnl-3-dev:i386,
# libnl-genl-3-dev:i386, libcmocka-dev:i386 (dpkg --add-architecture i386;
# scripts/install-deps arch installs them). Tests run by
# cmake/cross-exec: natively where the kernel runs them, else under qemu-i386-static.
set(CN_CROSS_TRIPLET i686-linux-gnu)
set(CN_CROSS_MULTIARCH i386-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CN_CROSS_QEMU qemu-i386-static)
set(CN_CROSS_LOADER /lib/ld-linux.so.2)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
