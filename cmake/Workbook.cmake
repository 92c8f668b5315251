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

# The .c files of lab NAME's manifest "files", under DIR.
function(workbook_lab_sources name dir out)
  file(READ "${CMAKE_SOURCE_DIR}/labs/${name}/lab.json" json)
  string(JSON n LENGTH "${json}" files)
  set(srcs "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON f GET "${json}" files ${i})
    if(f MATCHES "\\.c$" AND NOT f MATCHES "^module/")
      list(APPEND srcs "${dir}/${f}")
    endif()
  endforeach()
  set(${out} "${srcs}" PARENT_SCOPE)
endfunction()

function(workbook_add_lab labdir)
  get_filename_component(name "${labdir}" NAME)
  if(WORKBOOK_ONLY_LABS AND NOT name IN_LIST WORKBOOK_ONLY_LABS)
    return()
  endif()
  file(READ "${labdir}/lab.json" json)
  string(JSON label GET "${json}" label)

  # The lab's own files and those of the earlier labs it uses.
  workbook_impl_dir(${name} TRUE own_dir)
  workbook_lab_sources(${name} "${own_dir}" srcs)
  set(incs "${own_dir}")
  string(JSON nuses ERROR_VARIABLE no_uses LENGTH "${json}" uses)
  if(NOT no_uses AND nuses GREATER 0)
    math(EXPR last "${nuses} - 1")
    foreach(i RANGE ${last})
      string(JSON prior GET "${json}" uses ${i})
      workbook_impl_dir(${prior} FALSE pdir)
      workbook_lab_sources(${prior} "${pdir}" psrcs)
      list(APPEND srcs ${psrcs})
      list(APPEND incs "${pdir}")
    endforeach()
  endif()
  foreach(s IN LISTS srcs)
    if(NOT EXISTS "${s}")
      message(WARNING "${name}: missing student file ${s}")
    endif()
  endforeach()

  file(GLOB tests CONFIGURE_DEPENDS "${labdir}/tests/*.c")
  add_executable(${label}_tests ${tests} ${srcs})
  target_include_directories(${label}_tests PRIVATE ${incs} "${labdir}/tests")
  target_link_libraries(${label}_tests PRIVATE simkernel)
  target_compile_definitions(${label}_tests PRIVATE WORKBOOK_LAB="${name}")

  # Modules: shared objects built from student files (possibly another lab's),
  # or, with "dir": "tests", from the lab's own tests folder.
  string(JSON nmods ERROR_VARIABLE no_mods LENGTH "${json}" modules)
  if(NOT no_mods AND nmods GREATER 0)
    math(EXPR last "${nmods} - 1")
    foreach(i RANGE ${last})
      string(JSON mname GET "${json}" modules ${i} name)
      string(JSON mlab ERROR_VARIABLE no_mlab GET "${json}" modules ${i} lab)
      string(JSON mwhere ERROR_VARIABLE no_mwhere GET "${json}" modules ${i} dir)
      if(NOT no_mwhere AND mwhere STREQUAL "tests")
        # A module of the tests' own (never a student's): from the workbook.
        set(mdir "${labdir}/tests")
      elseif(no_mlab OR mlab STREQUAL name)
        set(mdir "${own_dir}")
      else()
        workbook_impl_dir(${mlab} FALSE mdir)
      endif()
      string(JSON msrc GET "${json}" modules ${i} source)
      set(target ${label}_mod_${mname})
      add_library(${target} MODULE "${mdir}/${msrc}")
      set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${mname}
        LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/modules/${label}")
      target_include_directories(${target} PRIVATE ${incs} "${labdir}/tests"
        "${CMAKE_SOURCE_DIR}/common/include")
      add_dependencies(${label}_tests ${target})
      target_compile_definitions(${label}_tests PRIVATE
        MODULE_PATH_${mname}="$<TARGET_FILE:${target}>")
    endforeach()
  endif()

  add_test(NAME ${label} COMMAND ${label}_tests --color=never -j2)
  set_tests_properties(${label} PROPERTIES LABELS ${label} TIMEOUT 900
    FAIL_REGULAR_EXPRESSION "usage: ;Synthesis: Tested: 0 ")
endfunction()
