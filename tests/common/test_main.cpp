// The one translation unit that holds Boost.Test's implementation (header-only form); every test
// executable links it and includes <boost/test/unit_test.hpp>.
#define BOOST_TEST_MODULE deepgemm
#include <boost/test/included/unit_test.hpp>
