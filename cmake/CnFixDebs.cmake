# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): make the packages
# CPack (3.25) writes what Debian expects. Each package that needs a fix is
# unpacked, fixed, and built again in place.
#  - A package with an ldconfig trigger gets no postinst/postrm of CPack's
#    that only run ldconfig (lintian: maintscript-calls-ldconfig).
#  - -dbgsym packages: CPack lists the debug files in DEBIAN/md5sums by their
#    absolute staging path and gives the package no doc directory; Debian's
#    point /usr/share/doc/PKG-dbgsym at the documentation of PKG, which they
#    depend on.
set(cn_ldconfig_only "^#!/bin/sh\n\nset -e\n\nif \\[ \"\\$1\" = \"(configure|remove)\" \\]; then\n\tldconfig\nfi\n$")

function(cn_repack deb tree)
  execute_process(COMMAND dpkg-deb --root-owner-group -b "${tree}" "${deb}"
    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${tree}")
endfunction()

foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(name "${deb}" NAME)
  if(NOT name MATCHES "\\.d?deb$")
    continue() # another generator's package (cpack -G TGZ)
  endif()
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND dpkg-deb -R "${deb}" "${tree}" COMMAND_ERROR_IS_FATAL ANY)
  if(name MATCHES "^(.+)-dbgsym_.*\\.ddeb$")
    set(main ${CMAKE_MATCH_1})
    execute_process(COMMAND find usr -type f -exec md5sum {} +
      WORKING_DIRECTORY "${tree}" OUTPUT_FILE "${tree}/DEBIAN/md5sums" COMMAND_ERROR_IS_FATAL ANY)
    file(MAKE_DIRECTORY "${tree}/usr/share/doc")
    file(CREATE_LINK ${main} "${tree}/usr/share/doc/${main}-dbgsym" SYMBOLIC)
    cn_repack("${deb}" "${tree}")
  elseif(EXISTS "${tree}/DEBIAN/triggers")
    file(READ "${tree}/DEBIAN/triggers" triggers)
    if(triggers MATCHES "activate-noawait ldconfig")
      foreach(script postinst postrm)
        if(EXISTS "${tree}/DEBIAN/${script}")
          file(READ "${tree}/DEBIAN/${script}" text)
          if(text MATCHES "${cn_ldconfig_only}")
            file(REMOVE "${tree}/DEBIAN/${script}")
          endif()
        endif()
      endforeach()
    endif()
    cn_repack("${deb}" "${tree}")
  else()
    file(REMOVE_RECURSE "${tree}")
  endif()
endforeach()
