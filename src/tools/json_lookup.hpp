// Reads single values out of a JSON text by a dotted path of object keys, for the tool's short
// summaries of dgemm_plan_describe's output ("chosen.config.name"). Not a general JSON library:
// arrays are skipped over, never indexed.
#pragma once

#include <optional>
#include <string>

namespace dgemm::tools {

// The value at `dotted_path`: a string's unescaped text, or a number / true / false / null as
// written. nullopt when the path is absent, leads into a non-object, or the text is not JSON.
std::optional<std::string> json_lookup(const std::string& json, const std::string& dotted_path);

}  // namespace dgemm::tools
