// clustertrain info: what an HDF5 file holds (src/data/h5_info.h). No MPI.
#include <iostream>
#include <memory>

#include "cmd/command.h"
#include "data/h5_info.h"
#include "util/error.h"

namespace ct {

Command AddInfoCommand(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cli = app.add_subcommand("info", "describe an HDF5 file: datasets, shapes, dtypes, chunks, compression");
  cli->add_option("file", *path, "HDF5 file")->required()->check(RegularFile());
  return {cli, [path](int, char**) -> int {
            try {
              std::cout << DescribeH5File(*path);
              return kExitOk;
            } catch (const Error& e) {
              return ReportEarlyError(e.what(), e.ExitCode());
            }
          }};
}

}  // namespace ct
