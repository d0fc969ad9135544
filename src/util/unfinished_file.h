// A stop signal (Ctrl-C, SIGTERM from kill or scancel, Slurm's SIGUSR1 warning) ends every
// command but training at once, as programs do. What such an end must not leave behind is the
// temporary file the command was writing (make-data, convert, predict write "OUT.h5.tmp" and
// rename it when complete): the handlers installed here remove it, say so, and then end the
// process by the signal, so that the launcher and the shell see how it ended (128 + signal).
// Training stops at a step boundary instead (cluster/preemption.h).
#pragma once

#include <string>

namespace ct {

// SIGTERM, SIGUSR1, SIGHUP and SIGINT (the last two not where they were ignored when the
// process started: background jobs of a script, nohup).
void InstallStopSignalCleanup();

// While one lives, a stop signal removes `path` before the process ends. One at a time; a
// second one replaces the first until it is destroyed.
class UnfinishedFile {
 public:
  explicit UnfinishedFile(const std::string& path);
  ~UnfinishedFile();
  UnfinishedFile(const UnfinishedFile&) = delete;
  UnfinishedFile& operator=(const UnfinishedFile&) = delete;

 private:
  std::string previous_;
};

}  // namespace ct
