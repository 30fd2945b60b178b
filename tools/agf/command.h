#pragma once
// Subcommand registry for the `agf` program: each subcommand lives in its own file and registers
// itself with a file-scope `agf::cli::Registration`, so main.cpp never changes when one is added.
//
//   static agf::cli::Registration bpe{"bpe", "BPE tokenizer: learn, encode, decode",
//                                     [](CLI::App& command) { ... command.callback(...); }};
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace agf::cli {

struct Command {
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> setup;  // adds options, subcommands and the callback
};

std::vector<Command>& commands();
// Subcommands of `agf bench`, registered the same way from their own files (bench_*.cpp).
std::vector<Command>& bench_commands();

struct Registration {
  Registration(std::string name, std::string description, std::function<void(CLI::App&)> setup) {
    commands().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

struct BenchRegistration {
  BenchRegistration(std::string name, std::string description, std::function<void(CLI::App&)> setup) {
    bench_commands().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace agf::cli
