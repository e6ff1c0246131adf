# What `cmake --install` puts where (GNUInstallDirs: multiarch libdir under
# /usr on Debian), in components: runtime (libcn0), dev (libcn-dev); cnctl's
# rules default to the cnctl component.

# An installed cnctl finds libcn.so.0: in a system library directory through
# ld.so, anywhere else (/usr/local, a scratch prefix) through a RUNPATH
# relative to the binary. Packages install to /usr and carry no RUNPATH.
list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${CMAKE_INSTALL_FULL_LIBDIR}" cn_system_libdir)
if(cn_system_libdir EQUAL -1)
  file(RELATIVE_PATH cn_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
  set(CMAKE_INSTALL_RPATH "$ORIGIN/${cn_bin_to_lib}")
endif()

# A package build (a system libdir: its binaries carry no RUNPATH) links
# the build tree's binaries relative to themselves ($ORIGIN): an absolute
# path to the build directory would be written into cnctl and, when
# installing, blanked out in place, leaving its length in the installed
# binary's string table, so that packages built in two directories differed
# (tests/package/check-reproducible.sh, reprotest's build_path). Other
# builds keep the absolute path: a copy of their cnctl, or one given file
# capabilities (ld.so ignores $ORIGIN then), still finds the library.
if(NOT cn_system_libdir EQUAL -1)
  set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
endif()

install(TARGETS cn EXPORT libcnTargets COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT dev)
install(TARGETS cn_static EXPORT libcnTargets COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

# find_package(libcn) -> libcn::cn (shared) and libcn::cn_static.
include(CMakePackageConfigHelpers)
set(CN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/libcn)
install(EXPORT libcnTargets NAMESPACE libcn:: DESTINATION ${CN_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/libcnConfig.cmake.in ${PROJECT_BINARY_DIR}/libcnConfig.cmake
  INSTALL_DESTINATION ${CN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/libcnConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/libcnConfig.cmake ${PROJECT_BINARY_DIR}/libcnConfigVersion.cmake
  DESTINATION ${CN_CMAKE_DIR} COMPONENT dev)

install(FILES include/libcn.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
# Not libcn/cnbus_test.h: the protocol of kmod's test module, which users'
# machines do not load (cnbus-dkms does not install it); the test tiers and
# bench/ include it from the source tree.
install(DIRECTORY include/libcn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.h" PATTERN "cnbus_test.h" EXCLUDE)

# libcn.pc is written when installing, for the prefix installed to (a
# --prefix or CPack's /usr), so pkg-config prints plain absolute paths
# instead of ${pcfiledir}/../.. chains.
set(CN_PC_STAGE ${PROJECT_BINARY_DIR}/pkgconfig-install)
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(CN_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/pkgconfig/libcn.pc.in\" \"${CN_PC_STAGE}/libcn.pc\" @ONLY)
" COMPONENT dev)
install(FILES ${CN_PC_STAGE}/libcn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# The license and the release notes in share/doc/libcn for a plain
# `cmake --install`. Component "doc" is not packaged (CPACK_COMPONENTS_ALL):
# Debian packages carry copyright and changelog.gz instead (CnPackaging.cmake),
# and lintian flags a second copy of a common license.
install(FILES COPYING NEWS DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc)
