/* hostile (round 2): call the harness's proof writer from student code,
 * with no header that declares it: each test that reaches the student's
 * code would record its end ("end") before the test's own assertions could
 * fail it. */
void sim_test_proof(const char *kind);

__attribute__((used)) static void hostile_prove(void)
{
	sim_test_proof("end");
}
