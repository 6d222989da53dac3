// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace memledger {

// One thing wrong with a configuration or a file. `path` names the field the
// way the preset spells it ("parallelism.tensor_model_parallel_size").
struct Problem
{
    enum class Severity { Error, Warning };

    Problem() = default;
    Problem(std::string path_, std::string message_, std::string suggestion_ = {}, Severity severity_ = Severity::Error)
        : path(std::move(path_))
        , message(std::move(message_))
        , suggestion(std::move(suggestion_))
        , severity(severity_)
    { }

    std::string path;
    std::string message;
    std::string suggestion; // may be empty
    Severity severity = Severity::Error;

    bool isError() const { return severity == Severity::Error; }
    // "path: message (suggestion)" as the CLI prints it.
    std::string toString() const;
};

using Problems = std::vector<Problem>;

bool hasErrors(const Problems &problems);

} // namespace memledger
