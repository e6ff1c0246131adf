# CPack project config file (CPACK_PROJECT_CONFIG_FILE): read by cpack for
# each generator before it installs anything, so a build that cannot make
# right Debian packages is refused with the way out, not packaged wrong.
#
# The install prefix is fixed when the build is configured: GNUInstallDirs
# chooses the libdir from it (lib/x86_64-linux-gnu only under /usr), and
# libcn.pc, the CMake package files and cnctl's RUNPATH carry it. Moving the
# files to /usr at packaging time would ship /usr/local paths inside /usr
# packages (108 lintian errors), so cpack -G DEB packages only a build
# configured with -DCMAKE_INSTALL_PREFIX=/usr.
if(CPACK_GENERATOR STREQUAL "DEB")
  if(NOT CPACK_CN_BUILD_PREFIX STREQUAL "/usr")
    message(FATAL_ERROR
      "cpack -G DEB: this build installs to ${CPACK_CN_BUILD_PREFIX} "
      "(CMAKE_INSTALL_PREFIX); Debian packages install to /usr and need a build "
      "configured for it, e.g.\n"
      "  cmake -S ${CPACK_CN_SOURCE_DIR} -B build-deb -DCMAKE_INSTALL_PREFIX=/usr\n"
      "  cmake --build build-deb && (cd build-deb && cpack -G DEB)")
  endif()
  if(NOT CPACK_CN_DKMS_VERSION STREQUAL CPACK_PACKAGE_VERSION)
    message(FATAL_ERROR
      "cpack -G DEB: kmod/dkms.conf's PACKAGE_VERSION (${CPACK_CN_DKMS_VERSION}) "
      "is not the project's version (${CPACK_PACKAGE_VERSION}): cnbus-dkms "
      "${CPACK_PACKAGE_VERSION} would hold /usr/src/cnbus-${CPACK_CN_DKMS_VERSION}")
  endif()
endif()
