# Debian packages with CPack (cd build && cpack -G DEB):
#   libcn0     the shared library (shlibs and symbols files, ldconfig trigger)
#   libcn-dev  headers, static library, pkg-config and CMake files, man pages
#   cnctl      the command-line tool
#   cnbus-dkms the kernel module's source for DKMS (CnDkmsPackage.cmake)
# The build takes Debian's hardening flags (CnDebBuildFlags.cmake); binaries
# are stripped as dh_strip does (CnStripDebs.cmake), their debug symbols go
# in -dbgsym packages (.ddeb). Why CPack and not debhelper: docs/DESIGN.md,
# "Decisions"; the packages are reproducible (tests/package/check-reproducible.sh).
# Configure with -DCMAKE_INSTALL_PREFIX=/usr for the multiarch libdir
# (lib/x86_64-linux-gnu) and no RUNPATH, as tests/package does; cpack -G DEB
# refuses any other prefix (CnCpackChecks.cmake).
set(CN_DEB_MAINTAINER "libcn maintainers <maintainers@users.noreply.a-seed-160a41c0.example>"
  CACHE STRING "Maintainer field of the Debian packages (Name <address>)")

if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "cpack -G DEB: refused for this build (prefix ${CMAKE_INSTALL_PREFIX}); "
                 "Debian packages need -DCMAKE_INSTALL_PREFIX=/usr")
endif()

set(cn_deb ${PROJECT_BINARY_DIR}/debian)
# Every package carries copyright and a compressed changelog in its doc dir.
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${cn_deb}/changelog @ONLY)
add_custom_command(OUTPUT ${cn_deb}/changelog.gz
  COMMAND gzip -9nc ${cn_deb}/changelog > ${cn_deb}/changelog.gz
  DEPENDS ${cn_deb}/changelog VERBATIM)
add_custom_target(deb_changelog ALL DEPENDS ${cn_deb}/changelog.gz)
# Lintian's tags that stay, each with its reason (cmake/debian/*.lintian-overrides),
# only in the packages: a plain `cmake --install` does not write them.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/cnctl.lintian-overrides
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME cnctl
  COMPONENT cnctl EXCLUDE_FROM_ALL)
# Only in the packages too: a plain `cmake --install` gets the upstream
# documents instead (COPYING, NEWS: CnInstall.cmake).
foreach(pair runtime:libcn0 dev:libcn-dev cnctl:cnctl)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${cn_deb}/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component}
    EXCLUDE_FROM_ALL)
endforeach()

# The symbols file, from the version nodes of src/libcn.map: each name with
# the node it is in; node LIBCN_X.Y came with package version X.Y.0.
file(STRINGS ${PROJECT_SOURCE_DIR}/src/libcn.map cn_map_lines)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/libcn.map)
set(cn_symbols "libcn.so.0 libcn0 #MINVER#\n* Build-Depends-Package: libcn-dev\n")
set(cn_node "")
foreach(line IN LISTS cn_map_lines)
  if(line MATCHES "^(LIBCN_([0-9.]+)) {")
    set(cn_node ${CMAKE_MATCH_1})
    set(cn_node_version ${CMAKE_MATCH_2}.0)
    string(APPEND cn_symbols " ${cn_node}@${cn_node} ${cn_node_version}\n")
  elseif(cn_node AND line MATCHES "^[ \t]+(cn_[a-z0-9_]+);")
    string(APPEND cn_symbols " ${CMAKE_MATCH_1}@${cn_node} ${cn_node_version}\n")
  endif()
endforeach()
file(WRITE ${cn_deb}/symbols "${cn_symbols}")
# ldconfig runs through dpkg's trigger; cmake/CnFixDebs.cmake removes the
# maintainer scripts CPack adds that call it directly.
file(WRITE ${cn_deb}/triggers "activate-noawait ldconfig\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libcn)
set(CPACK_PACKAGE_VENDOR "libcn")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${CN_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CN_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev cnctl dkms)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Every package (the -dbgsym ones too) names the one source they are built
# from, as Debian's binary packages do: lintian then checks them as a group
# (a -dbgsym package's /usr/share/doc link to its main package's).
set(CPACK_DEBIAN_PACKAGE_SOURCE libcn)
# CPack strips what it moves into the -dbgsym packages (CPACK_STRIP_FILES
# would strip first and leave nothing to split).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Let dpkg-shlibdeps find libcn.so.0 in the build tree.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libcn0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${cn_deb}/symbols ${cn_deb}/triggers)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "library for the Linux kernel connector
libcn talks to the Linux kernel connector (NETLINK_CONNECTOR) from
userspace: sockets and multicast groups by number, send and receive without
allocation per message, request/reply matching by seq/ack genealogy, typed
process events with loss detection, and the cnbus kernel module's
notification and introspection protocols.
.
This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libcn-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# libcn.h needs only the kernel's uapi headers; libcn.a links libnl-3.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libcn0 (= ${PROJECT_VERSION}), linux-libc-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "libnl-3-dev, libnl-genl-3-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION "library for the Linux kernel connector - development files
libcn talks to the Linux kernel connector (NETLINK_CONNECTOR) from
userspace.
.
This package holds the headers, the static library, the pkg-config and
CMake package files and the man pages of the API.")

set(CPACK_DEBIAN_CNCTL_PACKAGE_NAME cnctl)
set(CPACK_DEBIAN_CNCTL_PACKAGE_SECTION net)
set(CPACK_DEBIAN_CNCTL_PACKAGE_DEPENDS "libcn0 (>= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_CNCTL_DESCRIPTION "command-line tool for the Linux kernel connector
cnctl prints live process events (fork, exec, exit, ...) from the kernel's
proc connector, sends, receives and requests connector messages with
seq/ack genealogy, and shows the cnbus kernel module's callbacks and
counters, as text or JSON.")
include(${PROJECT_SOURCE_DIR}/cmake/CnDkmsPackage.cmake)

# What CnCpackChecks.cmake checks at cpack time (CPACK_* variables are the
# ones CPack writes into CPackConfig.cmake).
set(CPACK_CN_BUILD_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_CN_SOURCE_DIR ${PROJECT_SOURCE_DIR})
set(CPACK_CN_DKMS_VERSION ${CN_DKMS_VERSION})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/CnCpackChecks.cmake)
set(CPACK_CN_CHANGELOG ${cn_deb}/changelog)
set(CPACK_CN_STRIP ${CMAKE_STRIP})
set(CPACK_CN_OBJCOPY ${CMAKE_OBJCOPY})
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/CnStripDebs.cmake)
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/CnFixDebs.cmake)
include(CPack)
