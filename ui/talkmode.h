// SPDX-License-Identifier: MIT
#pragma once

#include <QFont>
#include <QObject>

#include "core/deck.h"

class QMainWindow;
class QWidget;

namespace memledger::ui {

class Document;

// Talk mode: the window full screen with large fonts, the plan panel hidden
// (optionally), and a deck of presets stepped with the arrow keys (Page
// Up/Down and Space too, as presenter remotes send); Escape leaves.
class TalkMode : public QObject
{
    Q_OBJECT
public:
    TalkMode(QMainWindow *window, QWidget *controls, Document *document, QObject *parent = nullptr);

    bool isActive() const { return m_active; }
    int slide() const { return m_slide; }
    int slideCount() const { return static_cast<int>(m_deck.slides.size()); }

    void start(const Deck &deck, bool hideControls = true);
    void stop();
    void step(int delta);

Q_SIGNALS:
    void slideChanged(int slide, int count);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QMainWindow *m_window;
    QWidget *m_controls;
    Document *m_document;
    Deck m_deck;
    int m_slide = 0;
    bool m_active = false;
    bool m_wasMaximized = false;
    QFont m_font;
};

} // namespace memledger::ui
