# The cnbus-dkms package (CPack component "dkms", included by
# CnPackaging.cmake): kmod's source as the DKMS tree /usr/src/cnbus-VERSION
# (the files `make -C kmod dkms-tree` copies: Kbuild, Makefile, dkms.conf,
# the C sources and headers, include/libcn/ with the headers kmod shares
# with libcn; tests/package/check-dkms-package.sh compares the two), kmod's
# README.md in /usr/share/doc/cnbus-dkms, maintainer scripts that add, build, install and remove
# it through dkms, and its own copyright (kmod is GPL-2.0).
#
# The rules are EXCLUDE_FROM_ALL: `cmake --install build` installs libcn,
# not a kernel source tree under PREFIX/src; only CPack's install of the
# component (or `cmake --install build --component dkms`) writes it.

# Name and version come from dkms.conf: they name the /usr/src directory and
# are what dkms add/remove are given. CnCpackChecks.cmake refuses packaging
# when they disagree with the project's version.
file(STRINGS ${PROJECT_SOURCE_DIR}/kmod/dkms.conf cn_dkms_name REGEX "^PACKAGE_NAME=")
file(STRINGS ${PROJECT_SOURCE_DIR}/kmod/dkms.conf cn_dkms_version REGEX "^PACKAGE_VERSION=")
string(REGEX REPLACE "^PACKAGE_NAME=\"?([^\"]*)\"?$" "\\1" CN_DKMS_NAME "${cn_dkms_name}")
string(REGEX REPLACE "^PACKAGE_VERSION=\"?([^\"]*)\"?$" "\\1" CN_DKMS_VERSION "${cn_dkms_version}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kmod/dkms.conf)
# PREFIX/src (GNUInstallDirs has no variable for it): /usr/src, as packages
# are made only with the /usr prefix (CnCpackChecks.cmake).
set(cn_dkms_dir src/${CN_DKMS_NAME}-${CN_DKMS_VERSION})

# Globbed at install time, so renamed or added kmod sources are packaged
# without a change here; objects of an in-place build (*.mod.c) are not.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kmod/ DESTINATION ${cn_dkms_dir}
  COMPONENT dkms EXCLUDE_FROM_ALL
  FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "Kbuild" PATTERN "Makefile"
  PATTERN "dkms.conf" PATTERN "*.mod.c" EXCLUDE)
# The same four headers as kmod/Makefile's dkms-tree target.
install(FILES ${PROJECT_SOURCE_DIR}/include/libcn/proto.h
  ${PROJECT_SOURCE_DIR}/include/libcn/kmod_genl.h
  ${PROJECT_SOURCE_DIR}/include/libcn/cnbus_test.h
  ${PROJECT_SOURCE_DIR}/include/libcn/cnbus_proc.h
  DESTINATION ${cn_dkms_dir}/include/libcn COMPONENT dkms EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_BINARY_DIR}/debian/changelog.gz ${PROJECT_SOURCE_DIR}/kmod/README.md
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/cnbus-dkms COMPONENT dkms EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/cnbus-dkms.copyright
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/cnbus-dkms RENAME copyright
  COMPONENT dkms EXCLUDE_FROM_ALL)

foreach(script postinst prerm)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/cnbus-dkms.${script}.in
    ${PROJECT_BINARY_DIR}/debian/cnbus-dkms/${script} @ONLY)
endforeach()

set(CPACK_DEBIAN_DKMS_PACKAGE_NAME cnbus-dkms)
set(CPACK_DEBIAN_DKMS_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DKMS_PACKAGE_SECTION kernel)
# common.postinst is dkms's since 2.1.0.0 (the version dh_dkms asks for).
set(CPACK_DEBIAN_DKMS_PACKAGE_DEPENDS "dkms (>= 2.1.0.0)")
set(CPACK_DEBIAN_DKMS_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DKMS_DEBUGINFO_PACKAGE OFF)
set(CPACK_DEBIAN_DKMS_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/debian/cnbus-dkms/postinst ${PROJECT_BINARY_DIR}/debian/cnbus-dkms/prerm)
set(CPACK_COMPONENT_DKMS_DESCRIPTION "cnbus kernel module (connector and CBUS) source for DKMS
cnbus is the 2005 kernel connector and CBUS design rebuilt for current
kernels, on a netlink unit of its own next to the kernel's built-in
connector: callbacks by id, notification requests, an insert path usable
from any context (hard IRQ included) that batches messages per CPU, and a
generic netlink family for introspection (libcn's cn_bus_query, cnctl kmod).
.
This package holds the module's source; DKMS builds and installs cnbus.ko
for every installed kernel that has headers, and again for new kernels.")
