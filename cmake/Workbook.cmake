# Workbook.cmake - one lab, one test binary, from the lab's manifest.
#
# Rule kept here: tests, common/ and the build always come from the
# workbook; only the files a lab's manifest lists under "files" come from the
# implementation under test (WORKBOOK_IMPL), and the earlier labs it "uses"
# come from the same place or, with WORKBOOK_PRIOR=solutions, from solutions/.

set(WORKBOOK_IMPL "${CMAKE_SOURCE_DIR}/labs" CACHE STRING
    "Folder with the labs' layout whose student files are built: labs, solutions or a submission")
set(WORKBOOK_PRIOR "own" CACHE STRING
    "Earlier labs a lab links: own (from WORKBOOK_IMPL) or solutions")
set_property(CACHE WORKBOOK_PRIOR PROPERTY STRINGS own solutions)
set(WORKBOOK_ONLY_LABS "" CACHE STRING "Build only these labs (folder names; empty: all)")
# CTest discovery runs the workbook's own manifest loader (tools/workbook/).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# The grader points this at a copy of the earlier labs' reference files, so
# that a sandboxed build never needs to see solutions/ itself.
set(WORKBOOK_SOLUTIONS "${CMAKE_SOURCE_DIR}/solutions" CACHE PATH
    "Where WORKBOOK_PRIOR=solutions takes the earlier labs from")
if(NOT IS_ABSOLUTE "${WORKBOOK_IMPL}")
  get_filename_component(WORKBOOK_IMPL "${CMAKE_SOURCE_DIR}/${WORKBOOK_IMPL}" ABSOLUTE)
endif()

# Where lab NAME's student files are taken from, for the lab itself (SELF) or
# for a later lab that uses it.
function(workbook_impl_dir name self out)
  # A handout may hold the solutions of some earlier labs only: the others
  # are the student's own.
  if(NOT self AND WORKBOOK_PRIOR STREQUAL "solutions"
     AND IS_DIRECTORY "${WORKBOOK_SOLUTIONS}/${name}")
    set(${out} "${WORKBOOK_SOLUTIONS}/${name}" PARENT_SCOPE)
  else()
    set(${out} "${WORKBOOK_IMPL}/${name}" PARENT_SCOPE)
  endif()
endfunction()

# What lab NAME's manifest says, as variables WB_NAME_LABEL, _FILES, _USES,
# _STEPS, _HEADER_MACROS and _MODULES in the caller's scope (a macro): the
# workbook's one manifest loader writes them (tools/workbook/cmakefrag.py),
# once per configure; CMake never parses lab.json itself. A manifest the
# loader refuses stops the configure with its message.
macro(workbook_manifest name)
  set(_wb_frag "${CMAKE_BINARY_DIR}/manifests/${name}.cmake")
  get_property(_wb_done GLOBAL PROPERTY WORKBOOK_MANIFEST_${name})
  if(NOT _wb_done)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools"
              ${Python3_EXECUTABLE} -B -m workbook.cmakefrag
              --lab "${CMAKE_SOURCE_DIR}/labs/${name}" --out "${_wb_frag}"
      RESULT_VARIABLE _wb_rc ERROR_VARIABLE _wb_err)
    if(_wb_rc)
      message(FATAL_ERROR "${_wb_err}")
    endif()
    set_property(GLOBAL PROPERTY WORKBOOK_MANIFEST_${name} TRUE)
    # A changed manifest (a test, a step of the memory model) reconfigures.
    set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 "${CMAKE_SOURCE_DIR}/labs/${name}/lab.json")
  endif()
  include("${_wb_frag}")
endmacro()

# Every file of lab NAME's manifest "files" (headers and modules too), as
# written there (relative to the lab's folder).
function(workbook_lab_manifest_files name out)
  workbook_manifest(${name})
  set(${out} "${WB_${name}_FILES}" PARENT_SCOPE)
endfunction()

# The .c files of lab NAME's manifest "files", under DIR (but not module/).
function(workbook_lab_sources name dir out)
  workbook_lab_manifest_files(${name} files)
  list(FILTER files INCLUDE REGEX "\\.c$")
  list(FILTER files EXCLUDE REGEX "^module/")
  list(TRANSFORM files PREPEND "${dir}/")
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

# Every file of lab NAME's manifest "files" (headers and modules too), under DIR.
function(workbook_lab_all_files name dir out)
  workbook_lab_manifest_files(${name} files)
  list(TRANSFORM files PREPEND "${dir}/")
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

function(workbook_add_lab labdir)
  get_filename_component(name "${labdir}" NAME)
  if(WORKBOOK_ONLY_LABS AND NOT name IN_LIST WORKBOOK_ONLY_LABS)
    return()
  endif()
  workbook_manifest(${name})
  set(label "${WB_${name}_LABEL}")

  # The lab's own files and those of the earlier labs it uses.
  workbook_impl_dir(${name} TRUE own_dir)
  workbook_lab_sources(${name} "${own_dir}" srcs)
  workbook_lab_all_files(${name} "${own_dir}" student)
  set(incs "${own_dir}")
  set(uses "${WB_${name}_USES}")
  foreach(prior IN LISTS uses)
    workbook_impl_dir(${prior} FALSE pdir)
    workbook_lab_sources(${prior} "${pdir}" psrcs)
    list(APPEND srcs ${psrcs})
    workbook_lab_all_files(${prior} "${pdir}" pall)
    list(APPEND student ${pall})
    list(APPEND incs "${pdir}")
  endforeach()
  foreach(s IN LISTS srcs)
    if(NOT EXISTS "${s}")
      message(WARNING "${name}: missing student file ${s}")
    endif()
  endforeach()

  file(GLOB tests CONFIGURE_DEPENDS "${labdir}/tests/*.c")
  # Tests that only the instructors' copy holds (solutions/NAME/tests/*.c,
  # e.g. lab 7's hidden broken RCUs) join the binary when present; a
  # handout, which has no solutions/, builds without them.
  file(GLOB hidden_tests CONFIGURE_DEPENDS "${WORKBOOK_SOLUTIONS}/${name}/tests/*.c")
  list(APPEND tests ${hidden_tests})
  add_executable(${label}_tests ${tests} ${srcs})
  target_include_directories(${label}_tests PRIVATE ${incs} "${labdir}/tests")
  target_link_libraries(${label}_tests PRIVATE simkernel)
  target_compile_definitions(${label}_tests PRIVATE WORKBOOK_LAB="${name}")
  # Student code (and what the tests' files expand of it) seen access by access.
  # The steps of the memory model the lab's manifest turns on.
  set(steps "${WB_${name}_STEPS}")
  # The macros the student headers of this lab and the labs it uses define
  # (api.header_macros): the runtime counts a test line that expands one as
  # student code.
  set(WORKBOOK_KCSAN_MACROS "")
  foreach(mlab IN ITEMS ${name} ${uses})
    workbook_manifest(${mlab})
    list(APPEND WORKBOOK_KCSAN_MACROS ${WB_${mlab}_HEADER_MACROS})
  endforeach()
  workbook_kcsan_instrument(${label}_tests "" "${student}" ${steps})

  # Modules: shared objects built from student files (possibly another lab's),
  # or, with "dir": "tests", from the lab's own tests folder.
  # Each is "name|source|lab|dir", "-" for a key the manifest leaves out.
  foreach(mod IN LISTS WB_${name}_MODULES)
    string(REPLACE "|" ";" mfields "${mod}")
    list(GET mfields 0 mname)
    list(GET mfields 1 msrc)
    list(GET mfields 2 mlab)
    list(GET mfields 3 mwhere)
    if(mwhere STREQUAL "tests")
      # A module of the tests' own (never a student's): from the workbook.
      set(mdir "${labdir}/tests")
    elseif(mlab STREQUAL "-" OR mlab STREQUAL name)
      set(mdir "${own_dir}")
    else()
      workbook_impl_dir(${mlab} FALSE mdir)
    endif()
    set(target ${label}_mod_${mname})
    add_library(${target} MODULE "${mdir}/${msrc}")
    set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${mname}
      LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/modules/${label}")
    target_include_directories(${target} PRIVATE ${incs} "${labdir}/tests"
      "${CMAKE_SOURCE_DIR}/common/include")
    if(WORKBOOK_KCSAN)
      target_compile_options(${target} PRIVATE -fsanitize=thread -Wno-tsan)
    endif()
    add_dependencies(${label}_tests ${target})
    target_compile_definitions(${label}_tests PRIVATE
      MODULE_PATH_${mname}="$<TARGET_FILE:${target}>")
  endforeach()

  workbook_discover_tests(${label}_tests ${label} "${labdir}")
endfunction()

# One CTest test per test of TARGET, named labN.suite/name, as
# gtest_discover_tests does: after each build a POST_BUILD step asks the
# binary (--list) and writes a CTest script (tools/workbook/ctest.py, which
# reads the lab's manifest with the workbook's one loader for the
# timeouts); the directory's TEST_INCLUDE_FILES loads it when ctest runs.
# Before the first build, ctest shows one failing labN_NOT_BUILT test.
# LABDIR empty (a binary with no lab.json, e.g. common_tests): default timeouts.
option(WORKBOOK_DISCOVER_TESTS
  "List each test binary's tests for CTest after the build (runs the binary: the grader turns it off, since a submission's code must run only in its sandbox)" ON)
function(workbook_discover_tests target label labdir)
  if(NOT WORKBOOK_DISCOVER_TESTS)
    return()
  endif()
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_ctest.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools"
            ${Python3_EXECUTABLE} -B -m workbook.ctest --exe $<TARGET_FILE:${target}>
            "--lab=${labdir}" --label ${label} --out "${ctest_file}"
            "--emulator=${CMAKE_CROSSCOMPILING_EMULATOR}"
            "--disable=${WORKBOOK_CTEST_DISABLED}"
            --timeout-scale ${WORKBOOK_TIMEOUT_SCALE}
    BYPRODUCTS "${ctest_file}"
    COMMENT "Listing the tests of ${target} for CTest"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${label}_NOT_BUILT ${label}_NOT_BUILT)\n"
    "  set_tests_properties(${label}_NOT_BUILT PROPERTIES LABELS ${label})\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
  if(labdir)
    # a changed lab.json (a timeout) relinks, so the step writes the file again
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${labdir}/lab.json")
  endif()
endfunction()
