// SPDX-License-Identifier: MIT
#include "ui/document.h"

#include <QStringList>

#include "core/builtins.h"
#include "core/hfimport.h"
#include "core/preset.h"
#include "core/validate.h"
#include "ui/qtstring.h"

namespace memledger::ui {

namespace {

QString problemsText(const Problems &problems, bool errorsOnly)
{
    QStringList lines;
    for (const Problem &problem : problems) {
        if (!errorsOnly || problem.isError())
            lines << QString::fromStdString(problem.toString());
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

Document::Document(QObject *parent)
    : QObject(parent)
{ }

bool Document::loadFile(const QString &path, QString *error)
{
    return applyLoaded(presetFromFile(path.toStdString()), path, error);
}

bool Document::loadBuiltinScenario(std::string_view name, QString *error)
{
    const BuiltinPreset *builtin = findBuiltin("scenarios", name);
    if (!builtin) {
        if (error)
            *error = tr("There is no built-in scenario named \"%1\".").arg(toQString(name));
        return false;
    }
    return applyLoaded(presetFromText(builtin->text, name), tr("built-in: %1").arg(toQString(name)), error);
}

bool Document::importHfConfig(const QString &path, QString *error)
{
    ImportResult imported = importHfConfigFile(path.toStdString());
    const Problems warnings = imported.problems; // without errors only warnings remain
    return applyLoaded({std::move(imported.config), std::move(imported.problems)},
                       tr("Hugging Face config %1").arg(path), error, warnings);
}

bool Document::applyLoaded(const LoadResult &loaded, const QString &source, QString *error, const Problems &sourceWarnings)
{
    if (!loaded.config || hasErrors(loaded.problems)) {
        if (error)
            *error = problemsText(loaded.problems, true);
        return false;
    }
    // A file that loads but describes an impossible split is refused too:
    // there would be no ledger to show for it.
    const Problems problems = validate(*loaded.config);
    if (hasErrors(problems)) {
        if (error)
            *error = problemsText(problems, true);
        return false;
    }
    m_source = source;
    m_sourceWarnings = sourceWarnings;
    setConfig(*loaded.config);
    return true;
}

void Document::setConfig(const Config &config)
{
    m_config = config;
    m_problems = validate(config);
    m_problems.insert(m_problems.end(), m_sourceWarnings.begin(), m_sourceWarnings.end());
    Q_EMIT configChanged(m_config);
    if (!hasErrors(m_problems)) {
        m_ledger = computeLedger(m_config);
        m_hasLedger = true;
        Q_EMIT ledgerChanged(m_ledger);
    }
    Q_EMIT problemsChanged(m_problems);
}

} // namespace memledger::ui
