# libcn's compile settings, per target: the C standard (C11 with GNU
# extensions), warnings (-Werror with CN_WERROR), 64-bit file offsets, the
# sanitizers (CN_SANITIZE) and, in a packaging build, Debian's build flags
# (CnDebBuildFlags.cmake). cn_build_flags(TARGET...) gives them to
# the library, cnctl, the examples and the tests, each where it is defined;
# cn_build_flags_directory(), at the end of a CMakeLists.txt, to every
# target it defined. Nothing is set for a directory, so a project that adds
# libcn with add_subdirectory or FetchContent compiles its own targets with
# its own settings. cn_build_flags_check() fails the configuration when a
# target compiled here does without them.

option(CN_WERROR "Treat warnings as errors (CI turns it on)" OFF)
option(CN_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

# cn_warnings: what every target takes; cn_sanitize: the sanitizers, which
# a target may do without (CN_NO_SANITIZE, below).
add_library(cn_warnings INTERFACE)
target_compile_options(cn_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
  -Wno-missing-field-initializers $<$<BOOL:${CN_WERROR}>:-Werror>)
# 64-bit file offsets on 32-bit ABIs (i386, armhf: the arch tier). Without
# them readdir fails with EOVERFLOW where a directory's offsets are 64-bit
# hashes (ext4), and the process tracker's scan of a /proc tree read as
# empty. libcn.h declares no off_t, so the library's ABI does not depend on it.
target_compile_definitions(cn_warnings INTERFACE _FILE_OFFSET_BITS=64)
add_library(cn_sanitize INTERFACE)
if(CN_SANITIZE)
  target_compile_options(cn_sanitize INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(cn_sanitize INTERFACE -fsanitize=address,undefined)
endif()

# cn_build_flags(TARGET...): the settings above, for each TARGET; without
# the sanitizers for a target whose property CN_NO_SANITIZE is true (set
# before). Linked in the build tree only: the installed libcn::cn_static
# does not carry them to its users.
function(cn_build_flags)
  foreach(t IN LISTS ARGN)
    set_target_properties(${t} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
    # Debian's first: its -Wformat would turn our -Wformat=2 down.
    target_link_libraries(${t} PRIVATE $<BUILD_INTERFACE:cn_deb_buildflags>
                                       $<BUILD_INTERFACE:cn_warnings>)
    get_target_property(no_sanitize ${t} CN_NO_SANITIZE)
    if(NOT no_sanitize)
      target_link_libraries(${t} PRIVATE $<BUILD_INTERFACE:cn_sanitize>)
    endif()
  endforeach()
endfunction()

# cn_build_flags_directory(): cn_build_flags() for every target compiled in
# the calling CMakeLists.txt, called at its end (tools, examples, each test
# tier): a target added there later gets the settings too.
function(cn_build_flags_directory)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      cn_build_flags(${t})
    endif()
  endforeach()
endfunction()

# cn_build_flags_check(): every target compiled from libcn's directories
# has the settings (a target added without cn_build_flags() would build
# without warnings, sanitizers or 64-bit offsets, and nothing else tells).
function(cn_build_flags_check)
  set(missing)
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
        get_target_property(libs ${t} LINK_LIBRARIES)
        if(NOT "${libs}" MATCHES "cn_warnings")
          list(APPEND missing ${t})
        endif()
      endif()
    endforeach()
  endwhile()
  if(missing)
    message(FATAL_ERROR "targets without libcn's compile settings: ${missing}; "
                        "call cn_build_flags(TARGET) or, at the end of its CMakeLists.txt, "
                        "cn_build_flags_directory() (cmake/CnBuildFlags.cmake)")
  endif()
endfunction()
