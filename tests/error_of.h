// The message of the error a piece of code throws, for tests that check what users are told.
#pragma once

#include <functional>
#include <string>

#include "util/error.h"

namespace ct::test {

// The message of the E (ct::Error or a kind of it) that `body` throws; "" if it throws none.
template <typename E = Error>
std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace ct::test
