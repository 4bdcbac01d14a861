// The proleptic Gregorian calendar, shared by every module that reads or computes dates: FHIR's
// date formats (fhir), FHIRPath's date arithmetic and boundaries (fhirpath), HL7 v2's DTM (hl7v2)
// and the file format's dates and timestamps (format). One leap-year rule, one day count.
#pragma once

#include <cstdint>

namespace quire::detail {

/// Whether `year` has a 29 February (divisible by 4, and by 400 when by 100: 2000 yes, 1900 no).
constexpr bool is_leap_year(int64_t year) noexcept { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

/// The number of days of `month` (1-12) in `year`; 0 for a month outside 1-12.
constexpr int days_in_month(int64_t year, int month) noexcept {
  constexpr int DAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return 0;
  return month == 2 && is_leap_year(year) ? 29 : DAYS[month - 1];
}

/// Days from 1970-01-01 to year-month-day (month 1-12, day 1-31; Howard Hinnant's
/// days_from_civil, exact for every year an int64_t day count holds).
constexpr int64_t days_from_civil(int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

/// The date `z` days from 1970-01-01 (the inverse of days_from_civil).
constexpr void civil_from_days(int64_t z, int64_t &y, unsigned &m, unsigned &d) noexcept {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

}  // namespace quire::detail
