// The HTML report of deepgemm-bench: bench/report/report.html (embedded at build time) with a
// bench.json in its data block; the page's own script draws the charts. bench/report/render.py
// does the same substitution without the binary.
#pragma once

#include <string>

namespace bench {

// The template's text (generated from bench/report/report.html by bench/CMakeLists.txt).
const char* report_template();

// The report for one bench.json text. '<', '>' and '&' occur only inside JSON strings, where the
// \u escapes mean the same, so they are replaced and the data cannot close its <script> block.
std::string report_html(const std::string& bench_json);

}  // namespace bench
