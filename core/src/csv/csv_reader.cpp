// RFC 4180 records. Unquoted fields are views into the input; quoted fields are unescaped into one
// buffer per record, and their views are made only once the record is complete, because the
// buffer may move while it grows.
#include "quire/csv.h"

namespace quire::csv {

quire::error make_error(std::string message, uint64_t offset, uint32_t line, uint32_t column) {
  quire::error e(error_code::INVALID_CSV, std::move(message), offset);
  e.line = line;
  e.column = column;
  return e;
}

reader::reader(std::string_view input, const options &opts) : input_(input), opts_(opts) {
  if (input_.size() >= 3 && static_cast<uint8_t>(input_[0]) == 0xEF && static_cast<uint8_t>(input_[1]) == 0xBB &&
      static_cast<uint8_t>(input_[2]) == 0xBF) {
    pos_ = 3;
  }
}

result<bool> reader::next(std::vector<std::string_view> &fields) {
  fields.clear();
  unescaped_.clear();
  // Blank lines are not records (a trailing newline, or blank lines between records).
  while (pos_ < input_.size() &&
         (input_[pos_] == '\n' || (input_[pos_] == '\r' && pos_ + 1 < input_.size() && input_[pos_ + 1] == '\n'))) {
    pos_ += input_[pos_] == '\r' ? 2 : 1;
    ++line_;
  }
  if (pos_ >= input_.size()) return false;
  record_line_ = line_;
  record_offset_ = pos_;
  const char delim = opts_.delimiter;
  const size_t n = input_.size();
  // Each field is recorded as (quoted, start, length): quoted fields index into unescaped_.
  struct field_ref {
    bool quoted;
    size_t start, length;
  };
  std::vector<field_ref> refs;
  while (true) {
    uint32_t column = static_cast<uint32_t>(refs.size() + 1);
    if (refs.size() >= opts_.max_columns) {
      return make_error("a record has more than " + std::to_string(opts_.max_columns) + " fields", pos_, line_, column);
    }
    if (pos_ < n && input_[pos_] == '"') {
      size_t field_offset = pos_;
      uint32_t field_line = line_;
      ++pos_;
      size_t start = unescaped_.size();
      while (true) {
        if (pos_ >= n) return make_error("a quoted field has no closing quote", field_offset, field_line, column);
        size_t q = input_.find('"', pos_);
        if (q == std::string_view::npos)
          return make_error("a quoted field has no closing quote", field_offset, field_line, column);
        for (size_t i = pos_; i < q; ++i) {
          if (input_[i] == '\n') ++line_;
        }
        unescaped_.append(input_.substr(pos_, q - pos_));
        pos_ = q + 1;
        if (pos_ < n && input_[pos_] == '"') {
          unescaped_.push_back('"');
          ++pos_;
          continue;
        }
        break;
      }
      if (unescaped_.size() - start > opts_.max_field_bytes) {
        quire::error e(error_code::LINE_TOO_LONG,
                       "a field is longer than max_field_bytes (" + std::to_string(opts_.max_field_bytes) + ")",
                       field_offset);
        e.line = field_line;
        e.column = column;
        return e;
      }
      refs.push_back({true, start, unescaped_.size() - start});
      if (pos_ < n && input_[pos_] != delim && input_[pos_] != '\n' && input_[pos_] != '\r') {
        return make_error("text after the closing quote of a field", pos_, line_, column);
      }
      if (pos_ < n && input_[pos_] == '\r' && !(pos_ + 1 < n && input_[pos_ + 1] == '\n')) {
        return make_error("a carriage return that does not end a line", pos_, line_, column);
      }
    } else {
      size_t start = pos_;
      while (pos_ < n && input_[pos_] != delim && input_[pos_] != '\n' && input_[pos_] != '\r') {
        if (input_[pos_] == '"') return make_error("a quote inside an unquoted field", pos_, line_, column);
        ++pos_;
      }
      if (pos_ - start > opts_.max_field_bytes) {
        quire::error e(error_code::LINE_TOO_LONG,
                       "a field is longer than max_field_bytes (" + std::to_string(opts_.max_field_bytes) + ")", start);
        e.line = line_;
        e.column = column;
        return e;
      }
      if (pos_ < n && input_[pos_] == '\r' && !(pos_ + 1 < n && input_[pos_ + 1] == '\n')) {
        return make_error("a carriage return that does not end a line", pos_, line_, column);
      }
      refs.push_back({false, start, pos_ - start});
    }
    if (pos_ < n && input_[pos_] == delim) {
      ++pos_;
      continue;
    }
    // End of the record: CRLF, LF or the end of the input.
    if (pos_ < n && input_[pos_] == '\r') ++pos_;
    if (pos_ < n && input_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
    break;
  }
  fields.reserve(refs.size());
  for (const auto &r : refs) {
    fields.push_back(r.quoted ? std::string_view(unescaped_).substr(r.start, r.length)
                              : input_.substr(r.start, r.length));
  }
  return true;
}

size_t record_scanner::find_end(std::string_view text, size_t from) noexcept {
  const char *data = text.data();
  const size_t n = text.size();
  for (size_t i = from; i < n; ++i) {
    const char c = data[i];
    switch (state_) {
      case state::quoted:
        if (c == '"') state_ = state::after_quote;
        else if (c == '\n') ++newlines_;
        break;
      case state::field_start:
      case state::after_quote:
        if (c == '"') {
          state_ = state::quoted;
          break;
        }
        [[fallthrough]];
      case state::unquoted:
        if (c == '\n') {
          ++newlines_;
          state_ = state::field_start;
          return i + 1;
        }
        state_ = c == delimiter_ ? state::field_start : state::unquoted;
        break;
    }
  }
  return std::string_view::npos;
}

}  // namespace quire::csv
