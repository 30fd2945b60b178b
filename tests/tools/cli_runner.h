#pragma once
// Runs the built `agf` program (AGF_BINARY) with arguments, capturing exit status and output.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_agf(const std::string& arguments) {
  const std::string command = std::string(AGF_BINARY) + " " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), read);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}
