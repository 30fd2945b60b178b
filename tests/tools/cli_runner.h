#pragma once
// Runs the built `agf` program (AGF_BINARY), or any command, capturing exit status and output.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell; the output of all of it, when it is a list of commands.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(("{ " + command + "\n} 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), read);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

inline CommandResult run_agf(const std::string& arguments) {
  return run_command(std::string(AGF_BINARY) + " " + arguments);
}
