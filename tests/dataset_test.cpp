// quire::dataset and the partitioned table_writer: Hive-style folder names that never leave the
// dataset, a view's rows routed to one part per value, manifests both ways and their hostile
// forms, the merge of writers' fragments, pruning by partition and by statistics, and queries
// across the kept files (offset and limit spanning them, a file the manifest lies about).
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "quire/dataset.h"
#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

const char *VIEW = R"j({"resourceType":"ViewDefinition","resource":"Patient","select":[{"column":[
  {"name":"id","path":"id","type":"id"},
  {"name":"gender","path":"gender","type":"code"},
  {"name":"born","path":"birthDate","type":"date"},
  {"name":"rank","path":"multipleBirth.ofType(integer)","type":"integer"}]}]})j";

// 60 patients: genders in turn (female, male, other, none), births rising by a year each.
std::string patients() {
  std::string s;
  const char *genders[] = {"female", "male", "other", nullptr};
  for (int i = 0; i < 60; ++i) {
    s += "{\"resourceType\":\"Patient\",\"id\":\"p" + std::to_string(i) + "\"";
    if (genders[i % 4]) s += std::string(",\"gender\":\"") + genders[i % 4] + "\"";
    s += ",\"birthDate\":\"" + std::to_string(1950 + i) + "-01-01\",\"multipleBirthInteger\":" + std::to_string(i) +
         "}\n";
  }
  return s;
}

// Parts in memory, by folder.
struct memory_parts final : view::part_sinks {
  std::map<std::string, format::vector_sink, std::less<>> sinks;
  std::vector<std::string> opened;
  result<format::byte_sink *> open(std::string_view segment) override {
    opened.emplace_back(segment);
    return &sinks[std::string(segment)];
  }
};

struct written {
  memory_parts parts;
  dataset::manifest m;
  std::map<std::string, std::vector<uint8_t>, std::less<>> files;  // by manifest path
};

void write_dataset(written &out, std::string_view input, const std::string &column = "gender") {
  auto v = view::compile(VIEW);
  REQUIRE(v);
  auto w = view::table_writer::create_partitioned(*v, column, {}, out.parts);
  REQUIRE(w);
  REQUIRE(w.value()->feed_ndjson(input));
  auto rows = w.value()->finish();
  REQUIRE(rows);
  auto schema = view::table_schema(*v);
  REQUIRE(schema);
  out.m.schema = *schema;
  out.m.partition_by = column;
  for (const auto &p : w.value()->partitions()) {
    const std::string path = dataset::part_path(p.segment, "00000");
    out.files[path] = out.parts.sinks[p.segment].bytes;
    auto f = format::file::open(borrow_bytes(out.files[path]));
    REQUIRE(f);
    CHECK(f->row_count() == p.rows);
    auto e = dataset::describe_file(*f, path, p.value);
    REQUIRE(e);
    out.m.files.push_back(std::move(e).value());
  }
}

dataset::reader reader_of(written &w) {
  return dataset::reader(w.m, [&w](std::string_view path) -> result<std::unique_ptr<byte_source>> {
    auto it = w.files.find(path);
    if (it == w.files.end()) return error(error_code::FILE_NOT_FOUND, std::string(path));
    return own_bytes(it->second);
  });
}

format::query where(const char *text) {
  auto f = format::parse_expression(text);
  REQUIRE(f);
  return format::rows_where(std::move(f).value());
}

}  // namespace

TEST_CASE("dataset: a partition's folder is COL=VALUE, escaped as Hive escapes, never a way out", "[dataset]") {
  auto seg = [](std::optional<std::string_view> v) {
    auto s = dataset::partition_segment("g", v);
    REQUIRE(s);
    return *s;
  };
  CHECK(seg("female") == "g=female");
  CHECK(seg("a/b") == "g=a%2Fb");
  CHECK(seg("..") == "g=..");
  CHECK(seg(std::string_view("a\0b", 3)) == "g=a%00b");
  CHECK(seg("x=1:2") == "g=x%3D1%3A2");
  CHECK(seg("50%") == "g=50%25");
  CHECK(seg("Zürich") == "g=Zürich");
  CHECK(seg("") == "g=");
  CHECK(seg(std::nullopt) == "g=__HIVE_DEFAULT_PARTITION__");
  CHECK(seg("__HIVE_DEFAULT_PARTITION__") == "g=%5F_HIVE_DEFAULT_PARTITION__");
  CHECK(dataset::partition_segment("a/b", "x").value() == "a%2Fb=x");
  CHECK(dataset::partition_segment("", "x").error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::partition_segment("g", std::string(254, 'x')).error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::partition_segment("g", std::string(100, '/')).error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::partition_segment("g", std::string(253, 'x')));  // g= and 253 bytes: 255

  CHECK(dataset::check_part_name("task-07.a_b"));
  for (const char *bad : {"", ".hidden", "a/b", "a b", "..", "x\n"})
    CHECK(dataset::check_part_name(bad).error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::check_part_name(std::string(65, 'a')).error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::part_path("g=female", "7") == "g=female/part-7.quire");
}

TEST_CASE("dataset: a partitioned writer sends each row to its value's part, whole", "[dataset]") {
  written w;
  write_dataset(w, patients());
  REQUIRE(w.parts.opened == std::vector<std::string>{"gender=female", "gender=male", "gender=other",
                                                     "gender=__HIVE_DEFAULT_PARTITION__"});
  CHECK(w.m.rows() == 60);
  for (const auto &e : w.m.files) {
    CHECK(e.rows == 15);
    auto f = format::file::open(borrow_bytes(w.files[e.path]));
    REQUIRE(f);
    format::query q;
    q.columns = {"gender"};
    auto genders = f->query(q, format::row_text::cells);
    REQUIRE(genders);
    const std::string one = e.partition ? "[\"" + *e.partition + "\"]\n" : "[null]\n";
    std::string expected;
    for (int i = 0; i < 15; ++i) expected += one;
    CHECK(genders->json == expected);
  }
  // The summaries: rank bounds each part; born (a FHIR date, partial ones too) is text.
  const auto &female = w.m.files[0];
  CHECK(female.partition == "female");
  CHECK(female.columns[3].min.i == 0);
  CHECK(female.columns[3].max.i == 56);
  CHECK(w.m.files[3].partition == std::nullopt);
  CHECK(w.m.files[3].columns[1].nulls == 15);
  CHECK(w.m.files[3].columns[1].min.k == format::value::kind::null_value);
}

TEST_CASE("dataset: a partitioned writer refuses what it cannot partition by", "[dataset]") {
  auto v = view::compile(VIEW);
  REQUIRE(v);
  memory_parts parts;
  CHECK(view::table_writer::create_partitioned(*v, "nope", {}, parts).error().code == error_code::NO_SUCH_COLUMN);
  format::write_options bad;
  bad.indexes.push_back({"nope", format::index_kind::hash});
  CHECK(view::table_writer::create_partitioned(*v, "gender", bad, parts).error().code == error_code::NO_SUCH_COLUMN);
  // More values than partitions allowed.
  auto w = view::table_writer::create_partitioned(*v, "id", {}, parts, {}, 10);
  REQUIRE(w);
  auto ok = w.value()->feed_ndjson(patients());
  REQUIRE_FALSE(ok);
  CHECK(ok.error().code == error_code::INVALID_ARGUMENT);
  CHECK(parts.opened.size() == 10);
}

TEST_CASE("dataset: the manifest's text reads back to the same manifest", "[dataset]") {
  written w;
  write_dataset(w, patients());
  const std::string text = dataset::to_json(w.m);
  auto back = dataset::parse_manifest(text);
  REQUIRE(back);
  CHECK(dataset::to_json(*back) == text);
  CHECK(back->files.size() == 4);
  CHECK(back->partition_by == "gender");
}

TEST_CASE("dataset: a hostile manifest is refused with what is wrong", "[dataset]") {
  written w;
  write_dataset(w, patients());
  const std::string good = dataset::to_json(w.m);
  auto code = [](const std::string &t) {
    auto m = dataset::parse_manifest(t);
    return m ? error_code::OK : m.error().code;
  };
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = good;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK(code("{") == error_code::INVALID_JSON);
  CHECK(code("[]") == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"quireDataset\":1", "\"quireDataset\":2")) == error_code::UNSUPPORTED_VERSION);
  CHECK(code(replaced("\"path\":\"gender=female/", "\"path\":\"../")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"path\":\"gender=female/", "\"path\":\"/etc/")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"path\":\"gender=female/", "\"path\":\"a//")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"type\":\"integer\"", "\"type\":\"when\"")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"partitionBy\":[\"gender\"]", "\"partitionBy\":[\"sex\"]")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("{\"nulls\":0,", "{\"nulls\":-1,")) == error_code::CORRUPT_FILE);
  CHECK(code(replaced("\"min\":0,", "\"min\":\"zero\",")) == error_code::CORRUPT_FILE);
  CHECK(code(std::string(dataset::MAX_MANIFEST_BYTES + 1, ' ')) == error_code::DOCUMENT_TOO_LARGE);
}

TEST_CASE("dataset: fragments merge when they agree, and not when two list one file", "[dataset]") {
  written a, b;
  write_dataset(a, patients());
  write_dataset(b, patients());
  for (auto &e : b.m.files) e.path = e.path.substr(0, e.path.find('/')) + "/part-00001.quire";
  auto m = dataset::merge({a.m, b.m});
  REQUIRE(m);
  CHECK(m->rows() == 120);
  CHECK(m->files.size() == 8);
  CHECK(std::is_sorted(m->files.begin(), m->files.end(), [](const auto &x, const auto &y) { return x.path < y.path; }));
  CHECK(dataset::merge({a.m, a.m}).error().code == error_code::INVALID_ARGUMENT);
  dataset::manifest other = b.m;
  other.schema.columns[3].type = format::column_type::float64;
  CHECK(dataset::merge({a.m, other}).error().code == error_code::INVALID_ARGUMENT);
  CHECK(dataset::merge({}).error().code == error_code::INVALID_ARGUMENT);
}

TEST_CASE("dataset: a query skips files by partition and by statistics and reads the rest in order", "[dataset]") {
  written w;
  write_dataset(w, patients());
  auto r = reader_of(w);

  auto p = dataset::prune(w.m, where("gender = 'male'").where);
  REQUIRE(p);
  CHECK(p->files == std::vector<size_t>{1});
  CHECK(p->skipped_by_partition == 3);
  p = dataset::prune(w.m, where("rank > 57").where);  // 58 is other, 59 none
  REQUIRE(p);
  CHECK(p->files == std::vector<size_t>{2, 3});
  CHECK(p->skipped_by_statistics == 2);
  CHECK(p->skipped_by_partition == 0);
  p = dataset::prune(w.m, where("gender is null or born < '1951-06-01'").where);
  REQUIRE(p);
  CHECK(p->files == std::vector<size_t>{0, 1, 3});
  CHECK(dataset::prune(w.m, where("nope = 1").where).error().code == error_code::NO_SUCH_COLUMN);

  auto rows = r.query(where("rank >= 55"), format::row_text::ndjson);
  REQUIRE(rows);
  CHECK(rows->count == 5);
  CHECK(rows->json ==
        "{\"id\":\"p56\",\"gender\":\"female\",\"born\":\"2006-01-01\",\"rank\":56}\n"
        "{\"id\":\"p57\",\"gender\":\"male\",\"born\":\"2007-01-01\",\"rank\":57}\n"
        "{\"id\":\"p58\",\"gender\":\"other\",\"born\":\"2008-01-01\",\"rank\":58}\n"
        "{\"id\":\"p55\",\"gender\":null,\"born\":\"2005-01-01\",\"rank\":55}\n"
        "{\"id\":\"p59\",\"gender\":null,\"born\":\"2009-01-01\",\"rank\":59}\n");
  CHECK(r.count(where("rank >= 55")).value() == 5);
  CHECK(r.count().value() == 60);

  // Offset and limit across files: rows 14..17 of the whole are female's last and male's first three.
  format::query q;
  q.columns = {"id"};
  q.offset = 14;
  q.limit = 4;
  auto some = r.query(q, format::row_text::cells);
  REQUIRE(some);
  CHECK(some->json == "[\"p56\"]\n[\"p1\"]\n[\"p5\"]\n[\"p9\"]\n");
  CHECK(r.count(q).value() == 4);
  auto csv = r.query(where("rank > 57"), format::row_text::csv);
  REQUIRE(csv);
  CHECK(csv->json == "id,gender,born,rank\np58,other,2008-01-01,58\np59,,2009-01-01,59\n");
  auto arr = r.query(where("rank > 57"), format::row_text::json_array);
  REQUIRE(arr);
  CHECK(arr->json.front() == '[');
  CHECK(arr->json.find("},{") != std::string::npos);
  auto ex = r.explain(where("gender = 'male'"));
  REQUIRE(ex);
  CHECK(*ex ==
        "{\"files\":4,\"skippedByPartition\":3,\"skippedByStatistics\":0,\"scanned\":[\"gender=male/"
        "part-00000.quire\"]}");
  format::query ordered;
  ordered.order_by = "rank";
  CHECK(r.query(ordered).error().code == error_code::INVALID_QUERY);
}

TEST_CASE("dataset: a file unlike its manifest entry is CORRUPT_FILE, not a wrong answer", "[dataset]") {
  written w;
  write_dataset(w, patients());
  w.m.files[1].rows = 14;
  auto r = reader_of(w);
  CHECK(r.count(where("gender = 'female'")).value() == 15);
  CHECK(r.count(where("gender = 'male'")).error().code == error_code::CORRUPT_FILE);
  written gone;
  write_dataset(gone, patients());
  gone.files.erase(gone.m.files[0].path);
  CHECK(reader_of(gone).count().error().code == error_code::FILE_NOT_FOUND);
}

TEST_CASE("dataset: the writers' ranges of an input must cover it exactly once", "[dataset]") {
  written w;
  write_dataset(w, patients());
  auto fragment = [&](const std::string &part, uint64_t start, uint64_t end, const std::string &input = "x.ndjson") {
    dataset::manifest m;
    m.schema = w.m.schema;
    m.partition_by = w.m.partition_by;
    m.ranges.push_back({.input = input, .input_bytes = 100, .start = start, .end = end, .part = part});
    return m;
  };
  auto merged = dataset::merge({fragment("a", 0, 40), fragment("c", 70, 100), fragment("b", 40, 70)});
  REQUIRE(merged);
  CHECK(merged->ranges.size() == 3);
  // An empty range (a part a long line covered) is fine; another input is checked on its own.
  CHECK(dataset::merge(
      {fragment("a", 0, 40), fragment("e", 40, 40), fragment("b", 40, 100), fragment("z", 0, 100, "y.ndjson")}));
  auto why = [](result<dataset::manifest> r) {
    REQUIRE_FALSE(r);
    CHECK(r.error().code == error_code::INVALID_ARGUMENT);
    return r.error().message;
  };
  CHECK_THAT(why(dataset::merge({fragment("a", 0, 40), fragment("b", 30, 100)})),
             Catch::Contains("parts a and b overlap at bytes 30..40 of x.ndjson (100 bytes)"));
  CHECK_THAT(why(dataset::merge({fragment("a", 0, 40), fragment("b", 50, 100)})),
             Catch::Contains("bytes 40..50 of x.ndjson (100 bytes) are in no writer's range"));
  CHECK_THAT(why(dataset::merge({fragment("a", 10, 100)})), Catch::Contains("bytes 0..10"));
  CHECK_THAT(why(dataset::merge({fragment("a", 0, 90)})), Catch::Contains("bytes 90..100"));
  CHECK_THAT(why(dataset::merge({fragment("a", 0, 100), fragment("b", 0, 100)})), Catch::Contains("overlap"));
  // The ranges survive the manifest's text.
  auto back = dataset::parse_manifest(dataset::to_json(*merged));
  REQUIRE(back);
  CHECK(dataset::to_json(*back) == dataset::to_json(*merged));
  std::string text = dataset::to_json(*merged);
  text.replace(text.find("\"start\":70"), 10, "\"start\":170");
  CHECK(dataset::parse_manifest(text).error().code == error_code::CORRUPT_FILE);
}
