/*
 * check_main.h: the main() every unit test shares: run one suite, exit
 * non-zero when any test failed.  Include it last, after the suite function.
 */
#include <check.h>
#include <stdlib.h>

#define CHECK_MAIN(suite_fn)                                                                       \
    int main(void)                                                                                 \
    {                                                                                              \
        SRunner *sr = srunner_create(suite_fn());                                                  \
        int failed;                                                                                \
        srunner_run_all(sr, CK_NORMAL);                                                            \
        failed = srunner_ntests_failed(sr);                                                        \
        srunner_free(sr);                                                                          \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                          \
    }
