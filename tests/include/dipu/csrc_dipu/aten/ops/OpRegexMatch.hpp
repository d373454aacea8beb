// Stand-in for csrc_dipu/aten/ops/OpRegexMatch.hpp (DIPU 9dd38082): regex lists
// read from DIPU_FORCE_FALLBACK_OPS_LIST / DIPU_AUTOCOMPARE_OPS_LIST (and their
// config files) that the registration macros consult.
#pragma once

#include <regex>
#include <vector>

namespace dipu {
namespace op_regex_match {

std::vector<std::regex> loadMatcher(const char* env_name, const char* config_name);
bool isOpMatch(const char* opname, const std::vector<std::regex>& matchers);

extern const std::vector<std::regex> kFallbackMatchers;
extern const std::vector<std::regex> kAutocompareMatchers;

}  // namespace op_regex_match
}  // namespace dipu
