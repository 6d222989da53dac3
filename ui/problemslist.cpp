// SPDX-License-Identifier: MIT
#include "ui/problemslist.h"

#include <QLabel>
#include <QListWidget>
#include <QSet>
#include <QStyle>
#include <QVBoxLayout>

#include "ui/document.h"
#include "ui/paint/cachedsizedelegate.h"
#include "ui/qtstring.h"

#include <utility>
#include <vector>

namespace memledger::ui {

ProblemsList::ProblemsList(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(new QLabel(tr("<b>Problems and notes</b>"), this));
    m_list = new QListWidget(this);
    layout->addWidget(m_list);
    m_list->setWordWrap(true);
    m_list->setIconSize(QSize(16, 16));
    m_list->setAlternatingRowColors(true);
    m_list->setItemDelegate(new CachedSizeDelegate(m_list));
}

void ProblemsList::refresh(const Document &document)
{
    enum Kind { Error, Warning, Note };
    // Ledger warnings repeat the validation warnings; show each line once.
    std::vector<std::pair<Kind, QString>> lines;
    QSet<QString> seen;
    const auto add = [&](const Problem &problem) {
        QString text = QString::fromStdString(problem.toString());
        if (seen.contains(text))
            return;
        seen.insert(text);
        lines.emplace_back(problem.isError() ? Error : Warning, std::move(text));
    };
    for (const Problem &problem : document.problems())
        add(problem);
    if (document.hasLedger()) {
        // The verdict the header colours, said where the problems are looked for (issue 34, item 21).
        const Ledger &ledger = document.ledger();
        if (!ledger.fits())
            lines.emplace_back(Warning, tr("The plan does not fit: rank %1 needs %2 of the device's %3.")
                                            .arg(ledger.peak_rank)
                                            .arg(bytesText(ledger.peak_bytes), bytesText(ledger.capacity_bytes)));
        for (const Problem &problem : document.ledger().warnings)
            add(problem);
        for (const std::string &choice : document.ledger().choices)
            lines.emplace_back(Note, QString::fromStdString(choice));
    }
    // Most moves of a control leave the list as it was: then it is left alone,
    // not cleared and laid out and painted again (the bench's profile had the
    // list's layout and paint at a fifth of a move's time).
    bool same = m_list->count() == static_cast<int>(lines.size());
    for (int i = 0; same && i < m_list->count(); ++i) {
        const QListWidgetItem *item = m_list->item(i);
        same = item->data(Qt::UserRole).toInt() == lines[static_cast<std::size_t>(i)].first
               && item->text() == lines[static_cast<std::size_t>(i)].second;
    }
    if (same)
        return;
    m_list->clear();
    if (m_icons[Error].isNull())
        m_icons = {style()->standardIcon(QStyle::SP_MessageBoxCritical),
                   style()->standardIcon(QStyle::SP_MessageBoxWarning),
                   style()->standardIcon(QStyle::SP_MessageBoxInformation)};
    for (const auto &[kind, text] : lines) {
        auto *item = new QListWidgetItem(m_icons[kind], text);
        item->setData(Qt::UserRole, static_cast<int>(kind));
        m_list->addItem(item);
    }
    // New lines are read from the first: a list scrolled down to an old note would hide a new error above it.
    m_list->scrollToTop();
}

} // namespace memledger::ui
