# Docs.cmake - the generated docs, in two editions.
#
#   cmake --build B --target docs              student edition   -> B/docs/student/html/index.html
#   cmake --build B --target docs-instructor   instructor edition -> B/docs/instructor/html/index.html
#   cmake --build B --target docs-all          both
#
# Rule kept here: the student edition never reads solutions/ (not in
# Doxygen's INPUT or EXAMPLE_PATH) and drops the quizzes' answers; both run
# Doxygen with FAIL_ON_WARNINGS, so one warning fails the target. The
# timelines are drawn on every build by docs_timelines, a program linked with
# the reference solutions that checks what it draws. Optional: without
# Doxygen, Graphviz's dot or Python 3 the targets are simply not defined.

find_package(Doxygen OPTIONAL_COMPONENTS dot)
find_package(Python3 COMPONENTS Interpreter)
if(NOT DOXYGEN_FOUND OR NOT TARGET Doxygen::dot OR NOT Python3_Interpreter_FOUND)
  message(STATUS "docs: Doxygen, Graphviz dot or Python 3 not found; no docs targets")
  return()
endif()

set(WORKBOOK_DOCS_DIR "${CMAKE_BINARY_DIR}/docs" CACHE PATH
    "Where the docs targets write <edition>/html")

# The timelines: a run of the simulated kernel with the reference solutions
# of lab 1 (and lab 4 when it exists). A handout without solutions/ draws
# placeholders instead.
set(_sol "${CMAKE_SOURCE_DIR}/solutions")
set(_tl_srcs "${CMAKE_SOURCE_DIR}/docs/timelines.c")
set(_tl_defs "")
if(EXISTS "${_sol}/01-synchronize-rcu/rcu.c")
  list(APPEND _tl_srcs "${_sol}/01-synchronize-rcu/rcu.c")
  list(APPEND _tl_defs TIMELINES_HAVE_LAB1)
  if(EXISTS "${_sol}/04-rcu-barrier/tree_rcu.c")
    # Quick Quiz #4 drawn from the very schedule lab 4's tests force.
    set(_lab4_tests "${CMAKE_SOURCE_DIR}/labs/04-rcu-barrier/tests")
    list(APPEND _tl_srcs "${_sol}/04-rcu-barrier/tree_rcu.c"
         "${_lab4_tests}/qq4_scenario.c" "${_lab4_tests}/lab4_util.c")
    list(APPEND _tl_defs TIMELINES_HAVE_LAB4)
  endif()
endif()
add_executable(docs_timelines EXCLUDE_FROM_ALL ${_tl_srcs})
target_link_libraries(docs_timelines PRIVATE simkernel)
target_compile_definitions(docs_timelines PRIVATE ${_tl_defs})
if(_lab4_tests)
  target_include_directories(docs_timelines PRIVATE "${_lab4_tests}")
endif()

foreach(edition student instructor)
  if(edition STREQUAL "student")
    set(_target docs)
    set(DOCS_BRIEF "A workbook on RCU: student edition")
    set(DOCS_SECTIONS "student")
    set(DOCS_EXAMPLE_PATH "${CMAKE_SOURCE_DIR}/common/tests ${CMAKE_SOURCE_DIR}/common/tests/modules ${CMAKE_SOURCE_DIR}/docs")
  else()
    set(_target docs-instructor)
    set(DOCS_BRIEF "A workbook on RCU: instructor edition (solutions and answers)")
    set(DOCS_SECTIONS "instructor")
    set(DOCS_EXAMPLE_PATH "${CMAKE_SOURCE_DIR}/common/tests ${CMAKE_SOURCE_DIR}/common/tests/modules ${CMAKE_SOURCE_DIR}/docs ${_sol}")
  endif()
  set(DOCS_SRC "${CMAKE_SOURCE_DIR}")
  set(DOCS_OUT "${WORKBOOK_DOCS_DIR}/${edition}")
  set(DOCS_PAGES "${WORKBOOK_DOCS_DIR}/${edition}-pages")
  # One folder per edition: both targets may run at once.
  set(_images "${WORKBOOK_DOCS_DIR}/${edition}-timelines")
  set(DOCS_IMAGES "${_images}")
  set(DOCS_HAVE_DOT YES)
  configure_file("${CMAKE_SOURCE_DIR}/docs/Doxyfile.in"
                 "${WORKBOOK_DOCS_DIR}/Doxyfile.${edition}" @ONLY)
  add_custom_target(${_target}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_images}"
    COMMAND $<TARGET_FILE:docs_timelines> "${_images}"
    COMMAND Python3::Interpreter "${CMAKE_SOURCE_DIR}/docs/prep_pages.py"
            --src "${CMAKE_SOURCE_DIR}" --out "${DOCS_PAGES}" --edition ${edition}
    COMMAND ${CMAKE_COMMAND} -E rm -rf "${DOCS_OUT}/html"
    COMMAND Doxygen::doxygen "${WORKBOOK_DOCS_DIR}/Doxyfile.${edition}"
    COMMAND ${CMAKE_COMMAND} -E echo "docs (${edition}): ${DOCS_OUT}/html/index.html, 0 warnings"
    DEPENDS docs_timelines
    WORKING_DIRECTORY "${WORKBOOK_DOCS_DIR}"
    COMMENT "Doxygen: ${edition} edition (warnings are errors)"
    VERBATIM)
endforeach()
add_custom_target(docs-all DEPENDS docs docs-instructor)

# docs-check: both editions, every internal link resolves, and the solution-
# only lines of solutions/ and the quizzes' answers appear in the instructor
# edition and never in the student edition.
add_custom_target(docs-check
  COMMAND Python3::Interpreter "${CMAKE_SOURCE_DIR}/docs/check_links.py"
          "${WORKBOOK_DOCS_DIR}/student/html" --solutions "${CMAKE_SOURCE_DIR}"
          --answers "${CMAKE_SOURCE_DIR}"
  COMMAND Python3::Interpreter "${CMAKE_SOURCE_DIR}/docs/check_links.py"
          "${WORKBOOK_DOCS_DIR}/instructor/html" --solutions "${CMAKE_SOURCE_DIR}"
          --expect-solutions --answers "${CMAKE_SOURCE_DIR}" --expect-answers
  DEPENDS docs docs-instructor
  COMMENT "Checking the docs' links and the student edition for solution code"
  VERBATIM)
