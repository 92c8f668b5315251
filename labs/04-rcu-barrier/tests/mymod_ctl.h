/* mymod_ctl.h - lab 3's module control block, shared with lab 3 (one definition). */
#include "../../03-module-unload/tests/mymod_ctl.h"
