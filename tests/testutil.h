/* tests/testutil.h - a tiny wrapper over CUnit's basic runner.
 *
 * Each test program lists its tests in a table and calls test_main(), which
 * registers one suite, runs it verbosely and returns non-zero on failure.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <CUnit/Basic.h>
#include <stdio.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

static inline int test_main(const char *suite, const test_case *cases)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    for (const test_case *c = cases; c->name; c++)
        CU_add_test(s, c->name, c->fn);
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

/* |a - b| <= rel * |b| */
#define ASSERT_REL(a, b, rel) CU_ASSERT(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

#endif
