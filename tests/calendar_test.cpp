// The one calendar of core (common/calendar.h): fhir's date formats, FHIRPath's date arithmetic,
// HL7 v2's DTM and the file format's dates all rest on it.
#include <catch2/catch.hpp>

#include "../core/src/common/calendar.h"

using quire::detail::civil_from_days;
using quire::detail::days_from_civil;
using quire::detail::days_in_month;
using quire::detail::is_leap_year;

TEST_CASE("calendar: leap years are divisible by 4, centuries only by 400", "[calendar]") {
  CHECK(is_leap_year(2024));
  CHECK(is_leap_year(2000));
  CHECK(is_leap_year(1600));
  CHECK_FALSE(is_leap_year(1900));
  CHECK_FALSE(is_leap_year(2100));
  CHECK_FALSE(is_leap_year(2023));
  CHECK(is_leap_year(0));
  CHECK(is_leap_year(-4));
}

TEST_CASE("calendar: days in each month, February by the year", "[calendar]") {
  CHECK(days_in_month(2024, 2) == 29);
  CHECK(days_in_month(2000, 2) == 29);
  CHECK(days_in_month(1900, 2) == 28);
  CHECK(days_in_month(2023, 2) == 28);
  const int expected[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  for (int m = 1; m <= 12; ++m) CHECK(days_in_month(2023, m) == expected[m - 1]);
  CHECK(days_in_month(2023, 0) == 0);
  CHECK(days_in_month(2023, 13) == 0);
}

TEST_CASE("calendar: day counts from 1970-01-01 and back", "[calendar]") {
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28) == 2);
  CHECK(days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28) == 1);
  CHECK(days_from_civil(2024, 12, 31) == 20088);
  CHECK(days_from_civil(1, 1, 1) == -719162);
  for (int64_t z : {int64_t{-719162}, int64_t{-1}, int64_t{0}, int64_t{11016}, int64_t{20088}, int64_t{2932896}}) {
    int64_t y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(z, y, m, d);
    CHECK(days_from_civil(y, m, d) == z);
  }
  int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(11016, y, m, d);
  CHECK((y == 2000 && m == 2 && d == 29));
}
