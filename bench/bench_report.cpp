// deepgemm-bench's HTML report: the embedded template with the data put in.
#include "bench_report.hpp"

namespace bench {

std::string report_html(const std::string& bench_json) {
  std::string safe;
  safe.reserve(bench_json.size());
  for (char c : bench_json) {
    if (c == '<') safe += "\\u003c";
    else if (c == '>') safe += "\\u003e";
    else if (c == '&') safe += "\\u0026";
    else safe += c;
  }
  const std::string marker = "__DEEPGEMM_BENCH_JSON__";
  std::string html = report_template();
  std::size_t at = html.find(marker);
  if (at != std::string::npos) html.replace(at, marker.size(), safe);
  return html;
}

}  // namespace bench
