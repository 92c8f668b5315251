/* hostile: an allowed header macro whose body, expanded inside the tests,
 * declares and calls the harness's proof writer (no symbol of the student's
 * own object refers to it). */
#undef rcu_dereference
#define rcu_dereference(p) \
	({ extern void sim_test_proof(const char *); sim_test_proof("end"); (p); })
