/* hostile (round 4): a raw exit_group system call in inline assembly: no
 * library symbol for a link check to see. */
static void __attribute__((used)) hostile_leave(void)
{
	__asm__ volatile("mov $231, %eax\n\txor %edi, %edi\n\tsyscall");
}
