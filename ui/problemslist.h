// SPDX-License-Identifier: MIT
#pragma once

#include <QIcon>
#include <QWidget>

#include <array>

class QListWidget;

namespace memledger::ui {

class Document;

// "Problems and notes" under every view, where an invalid edit is explained:
// the configuration's errors and warnings, the ledger's warnings and the
// implementation choices in force, each line once, with an icon of its kind.
class ProblemsList : public QWidget
{
    Q_OBJECT
public:
    explicit ProblemsList(QWidget *parent = nullptr);

    QListWidget *list() const { return m_list; }
    // Shows the document's lines; the list is left alone when they are the lines it shows.
    void refresh(const Document &document);

private:
    QListWidget *m_list;
    // The error, warning and note icons, made once: a new QIcon per rebuild would make every line look new to
    // the list's delegate, which keeps each line drawn (CachedSizeDelegate).
    std::array<QIcon, 3> m_icons;
};

} // namespace memledger::ui
