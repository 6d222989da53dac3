# SPDX-License-Identifier: MIT
# ctest "install: the guides are installed where the program looks for them" (CMakeLists.txt): installs the
# guides component into PREFIX and checks that BIN_DIR/DOC_FROM_BIN, where Help > Documentation looks
# (ui/helpmenu.cpp), holds README.md, the docs and the preset format.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component guides --prefix ${PREFIX}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component guides failed: ${rc}")
endif()
get_filename_component(docs ${PREFIX}/${BIN_DIR}/${DOC_FROM_BIN} ABSOLUTE)
foreach(guide README.md docs/accounting.md docs/time-model.md docs/measured-runs.md presets/README.md)
  if(NOT EXISTS ${docs}/${guide})
    message(FATAL_ERROR "${guide} is not installed in ${docs}")
  endif()
endforeach()
file(REMOVE_RECURSE ${PREFIX})
