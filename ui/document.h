// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

#include "core/config.h"
#include "core/ledger.h"
#include "core/problem.h"

#include <string_view>

namespace memledger {
struct LoadResult;
}

namespace memledger::ui {

// The one state object of the GUI: the current configuration, the last
// ledger computed from a valid configuration, and the problems of the
// current one. Views only listen to it.
class Document : public QObject
{
    Q_OBJECT
public:
    explicit Document(QObject *parent = nullptr);

    const Config &config() const { return m_config; }
    const Ledger &ledger() const { return m_ledger; }
    const Problems &problems() const { return m_problems; }
    // False until a valid configuration has been set.
    bool hasLedger() const { return m_hasLedger; }
    // True when the current configuration has errors and the ledger is an older one.
    bool isStale() const { return hasErrors(m_problems); }
    // The file last loaded, or "built-in: <name>".
    QString source() const { return m_source; }

    // Loads, validates and applies a preset file. On failure the document is
    // untouched, nothing is emitted, and `error` gets one line per problem.
    bool loadFile(const QString &path, QString *error = nullptr);
    bool loadBuiltinScenario(std::string_view name, QString *error = nullptr);
    // Imports a Hugging Face model config (core/hfimport.h): its model with
    // default training, parallelism and hardware. Refused like a bad preset
    // file; the import's warnings stay among the problems until the next load.
    bool importHfConfig(const QString &path, QString *error = nullptr);

    // Validates `config`; with errors the last valid ledger stays and only
    // the problems change, otherwise the ledger is recomputed. The problems
    // are the validation's plus the warnings of the source that was loaded.
    void setConfig(const Config &config);

Q_SIGNALS:
    void configChanged(const memledger::Config &config);
    void ledgerChanged(const memledger::Ledger &ledger);
    void problemsChanged(const memledger::Problems &problems);

private:
    bool applyLoaded(const LoadResult &loaded, const QString &source, QString *error, const Problems &sourceWarnings = {});

    Config m_config;
    Ledger m_ledger;
    Problems m_problems;
    Problems m_sourceWarnings; // what loading the current source could not carry over
    bool m_hasLedger = false;
    QString m_source;
};

} // namespace memledger::ui
