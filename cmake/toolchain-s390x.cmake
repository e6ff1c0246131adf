# Debian s390x: cmake -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x.cmake
# Needs gcc-s390x-linux-gnu, libc6-dev-s390x-cross, and libnl-3-dev:s390x,
# libnl-genl-3-dev:s390x, libcmocka-dev:s390x (dpkg --add-architecture s390x;
# scripts/install-deps arch installs them). Tests run by
# cmake/cross-exec: natively where the kernel runs them, else under qemu-s390x-static.
set(CN_CROSS_TRIPLET s390x-linux-gnu)
set(CN_CROSS_MULTIARCH s390x-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CN_CROSS_QEMU qemu-s390x-static)
set(CN_CROSS_LOADER /lib/ld64.so.1)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
