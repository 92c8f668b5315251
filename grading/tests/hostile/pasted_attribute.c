/* hostile (round 4): what a text filter does not read as the compiler does:
 * an attribute assembled by token pasting, and a #line directive that
 * passes the next lines off as a workbook header's. */
#define HOSTILE_CAT(a, b) a##b
static void HOSTILE_CAT(__attri, bute__)((HOSTILE_CAT(constr, uctor))) hostile_early(void)
{
}
#line 1 "@ROOT@/common/include/linux/list.h"
static int __attribute__((used)) hostile_line;
