/* hostile: switch the tests' assertions off from a header the tests include. */
#undef cr_assert
#define cr_assert(...) ((void)0)
#undef cr_assert_eq
#define cr_assert_eq(...) ((void)0)
