#include "cluster/agree.h"

#include <chrono>
#include <climits>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cluster/gather_strings.h"
#include "cluster/mpi_check.h"
#include "util/error.h"

namespace ct {
namespace {

constexpr auto kPeerWait = std::chrono::seconds(5);  // for peers when this rank failed alone
constexpr char kSeparator = '\x1f';                  // between code, host and message
constexpr size_t kRanksNamed = 8;                    // in "(on ranks 1, 3, ...)"

struct Failure {
  int code = kExitOk;
  std::string host, message;
};

// "(on rank 3 of 8, node4)", "(on ranks 1, 3 of 8: node2, node4)", with at most kRanksNamed.
std::string WhereItHappened(const std::vector<int>& ranks, const std::vector<Failure>& all, int world_size) {
  std::string numbers, hosts;
  for (size_t i = 0; i < ranks.size() && i < kRanksNamed; ++i) {
    numbers += (i ? ", " : "") + std::to_string(ranks[i]);
    const std::string& host = all[static_cast<size_t>(ranks[i])].host;
    if (hosts.find(host) == std::string::npos) hosts += (hosts.empty() ? "" : ", ") + host;
  }
  if (ranks.size() > kRanksNamed) numbers += " and " + std::to_string(ranks.size() - kRanksNamed) + " more";
  const std::string of = " of " + std::to_string(world_size);
  return ranks.size() == 1 ? "(on rank " + numbers + of + ", " + hosts + ")"
                           : "(on ranks " + numbers + of + ": " + hosts + ")";
}

// One line per distinct message, lowest rank first; a message every rank met stands alone.
std::string Compose(const std::vector<Failure>& all) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<int>> ranks;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].code == kExitOk) continue;
    auto& list = ranks[all[r].message];
    if (list.empty()) order.push_back(all[r].message);
    list.push_back(static_cast<int>(r));
  }
  if (order.size() == 1 && ranks[order[0]].size() == all.size()) return order[0];
  std::string text;
  for (const std::string& message : order) {
    text += (text.empty() ? "" : "\n  ") + message + " " +
            WhereItHappened(ranks[message], all, static_cast<int>(all.size()));
  }
  return text;
}

}  // namespace

void RunAgreed(const MpiWorld& world, const std::function<void()>& body) {
  std::exception_ptr failure;
  Failure mine;
  try {
    body();
  } catch (const Error& e) {
    failure = std::current_exception();
    mine = {e.ExitCode(), world.Host(), e.what()};
  } catch (const std::exception& e) {
    failure = std::current_exception();
    mine = {kExitFailure, world.Host(), ExceptionText(e)};
  }
  const MPI_Comm comm = world.AgreementComm();
  int my_rank = failure ? world.Rank() : INT_MAX;
  int first = INT_MAX;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Iallreduce(&my_rank, &first, 1, MPI_INT, MPI_MIN, comm, &request));
  const auto deadline = std::chrono::steady_clock::now() + kPeerWait;
  for (int done = 0;;) {
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) break;
    // Peers that did not fail always arrive; a rank that failed alone stops waiting for peers
    // stuck in a collective it left.
    if (failure && std::chrono::steady_clock::now() > deadline) std::rethrow_exception(failure);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (first == INT_MAX) return;
  // Everyone is here: every failing rank's code, host and message, to all.
  const std::string encoded =
      failure ? std::to_string(mine.code) + kSeparator + mine.host + kSeparator + mine.message : std::string();
  std::vector<Failure> all;
  for (const std::string& item : AllGatherStrings(comm, encoded)) {
    Failure f;
    const size_t a = item.find(kSeparator), b = item.find(kSeparator, a + 1);
    if (a != std::string::npos && b != std::string::npos) {
      f = {std::stoi(item.substr(0, a)), item.substr(a + 1, b - a - 1), item.substr(b + 1)};
    }
    all.push_back(f);
  }
  throw Error(Compose(all), all[static_cast<size_t>(first)].code, /*agreed=*/true);
}

}  // namespace ct
