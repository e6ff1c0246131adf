# Debian armhf: cmake -B build-armhf -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-armhf.cmake
# Needs gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross, and libnl-3-dev:armhf,
# libnl-genl-3-dev:armhf, libcmocka-dev:armhf (dpkg --add-architecture armhf;
# scripts/install-deps arch installs them). Tests run by
# cmake/cross-exec: natively where the kernel runs them, else under qemu-arm-static.
set(CN_CROSS_TRIPLET arm-linux-gnueabihf)
set(CN_CROSS_MULTIARCH arm-linux-gnueabihf)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CN_CROSS_QEMU qemu-arm-static)
set(CN_CROSS_LOADER /lib/ld-linux-armhf.so.3)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
