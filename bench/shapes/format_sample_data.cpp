// A deterministic generator of customer records for benchmarks, tests and the demo. SplitMix64
// drives every choice (no std:: distributions: their output differs between standard libraries),
// so a seed gives the same records natively and in wasm. Numbers and timestamps are written with
// core's own helpers (format_internal.h), so the NDJSON and CSV are the text core itself writes.
#include "format_sample_data.h"

#include <cctype>
#include <cstdio>

#include "format/format_internal.h"
#include "quire/json.h"

namespace quire::format {

namespace {

struct rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

constexpr const char *FIRST[] = {"Ana",   "Ben",   "Chloe", "David",  "Emeka",   "Fatima", "Grace", "Hiro",  "Ines",
                                 "Jonas", "Kwame", "Lena",  "Mateo",  "Nadia",   "Omar",   "Priya", "Quinn", "Rosa",
                                 "Sven",  "Tariq", "Uma",   "Victor", "Wanjiru", "Xavier", "Yara",  "Zoe",   "Amara",
                                 "Bruno", "Chen",  "Dalia", "Elif",   "Felix",   "Giulia", "Hana",  "Ivan",  "Julia"};
constexpr const char *LAST[] = {"Okafor",   "Smith",    "Garcia",  "Muller",  "Dubois", "Sato",  "Silva",    "Kowalski",
                                "Nguyen",   "Patel",    "Johnson", "Rossi",   "Hansen", "Kim",   "Mensah",   "Haddad",
                                "Novak",    "Ivanova",  "Moreau",  "Fischer", "Tanaka", "Costa", "Walker",   "Khan",
                                "Andersen", "Lopez",    "Adeyemi", "Schmidt", "Ito",    "Brown", "Nakamura", "Ferreira",
                                "Kariuki",  "Shikongo", "Nel",     "Jensen"};
constexpr const char *DOMAINS[] = {"example.org", "example.com", "mail.example", "post.example", "inbox.example"};

struct country_info {
  const char *code;
  unsigned weight;
  const char *cities[4];
};
constexpr country_info COUNTRIES[] = {
    {"US", 24, {"New York", "Chicago", "Austin", "Seattle"}},
    {"GB", 9, {"London", "Leeds", "Bristol", "Glasgow"}},
    {"DE", 8, {"Berlin", "Hamburg", "Munich", "Cologne"}},
    {"FR", 7, {"Paris", "Lyon", "Marseille", "Lille"}},
    {"IN", 8, {"Mumbai", "Delhi", "Pune", "Chennai"}},
    {"BR", 6, {"Sao Paulo", "Recife", "Curitiba", "Salvador"}},
    {"NG", 5, {"Lagos", "Abuja", "Ibadan", "Enugu"}},
    {"JP", 5, {"Tokyo", "Osaka", "Sapporo", "Fukuoka"}},
    {"CA", 5, {"Toronto", "Montreal", "Calgary", "Halifax"}},
    {"MX", 4, {"Mexico City", "Monterrey", "Puebla", "Merida"}},
    {"KE", 3, {"Nairobi", "Mombasa", "Kisumu", "Nakuru"}},
    {"ZA", 3, {"Cape Town", "Durban", "Pretoria", "Gqeberha"}},
    {"AU", 4, {"Sydney", "Perth", "Hobart", "Darwin"}},
    {"IT", 4, {"Rome", "Milan", "Turin", "Naples"}},
    {"NA", 2, {"Windhoek", "Walvis Bay", "Swakopmund", "Oshakati"}},
    {"SE", 3, {"Stockholm", "Malmo", "Uppsala", "Lund"}},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<customer> generate_customers(size_t count, uint64_t seed) {
  rng r{seed};
  unsigned total_weight = 0;
  for (const auto &c : COUNTRIES) total_weight += c.weight;
  std::vector<customer> out;
  out.reserve(count);
  // created_at: 2015-01-01T00:00:00Z onwards, increasing with id, spread over ten years.
  const int64_t start = detail::days_from_civil(2015, 1, 1) * 86400000000LL;
  const int64_t span = 3652LL * 86400000000LL;
  const int64_t step = count ? span / static_cast<int64_t>(count) : 0;
  for (size_t i = 0; i < count; ++i) {
    customer c;
    c.id = static_cast<int64_t>(i + 1);
    std::string first = FIRST[r.below(std::size(FIRST))];
    std::string last = LAST[r.below(std::size(LAST))];
    c.name = first + " " + last;
    // One draw per statement: the order in which operands of `+` are evaluated is unspecified
    // (g++ and clang differ), and every target must draw in the same order.
    const uint64_t number = r.below(1000);
    const char *domain = DOMAINS[r.below(std::size(DOMAINS))];
    c.email = lower(first) + "." + lower(last) + std::to_string(number) + "@" + domain;
    unsigned pick = static_cast<unsigned>(r.below(total_weight));
    const country_info *country = &COUNTRIES[0];
    for (const auto &k : COUNTRIES) {
      if (pick < k.weight) {
        country = &k;
        break;
      }
      pick -= k.weight;
    }
    c.country.assign(country->code, 2);
    c.city = country->cities[r.below(4)];
    c.age = 18 + static_cast<int64_t>(r.below(78));
    c.balance = static_cast<double>(r.below(10000000)) / 100.0;
    c.created_at =
        start + step * static_cast<int64_t>(i) +
        (step > 1000000 ? static_cast<int64_t>(r.below(static_cast<uint64_t>(step / 2))) / 1000000 * 1000000 : 0);
    out.push_back(std::move(c));
  }
  return out;
}

format::schema customer_schema() {
  return {{{"id", column_type::integer},
           {"name", column_type::string},
           {"email", column_type::string},
           {"country", column_type::string},
           {"city", column_type::string},
           {"age", column_type::integer},
           {"balance", column_type::float64},
           {"created_at", column_type::timestamp}}};
}

std::string customers_ndjson(const std::vector<customer> &customers) {
  std::string out;
  out.reserve(customers.size() * 190);
  for (const auto &c : customers) {
    out += "{\"id\":" + std::to_string(c.id) + ",\"name\":";
    json::append_quoted(out, c.name);
    out += ",\"email\":";
    json::append_quoted(out, c.email);
    out += ",\"country\":";
    json::append_quoted(out, c.country);
    out += ",\"city\":";
    json::append_quoted(out, c.city);
    out += ",\"age\":" + std::to_string(c.age) + ",\"balance\":";
    detail::append_double(out, c.balance);
    out += ",\"created_at\":\"";
    detail::append_timestamp(out, c.created_at);
    out += "\"}\n";
  }
  return out;
}

std::string customers_csv(const std::vector<customer> &customers) {
  std::string out = "id,name,email,country,city,age,balance,created_at\n";
  for (const auto &c : customers) {
    out += std::to_string(c.id) + "," + c.name + "," + c.email + "," + c.country + "," + c.city + "," +
           std::to_string(c.age) + ",";
    detail::append_double(out, c.balance);
    out.push_back(',');
    detail::append_timestamp(out, c.created_at);
    out.push_back('\n');
  }
  return out;
}

void customer_cells(const customer &c, std::vector<cell> &out) {
  out.clear();
  out.push_back(cell::of(c.id));
  out.push_back(cell::text(c.name));
  out.push_back(cell::text(c.email));
  out.push_back(cell::text(c.country));
  out.push_back(cell::text(c.city));
  out.push_back(cell::of(c.age));
  out.push_back(cell::of(c.balance));
  out.push_back(cell::of(c.created_at));
}

}  // namespace quire::format
