#include <cstdio>
int main() { std::puts("deepgemm: tool under construction"); return 0; }
