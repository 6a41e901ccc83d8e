import type { OutgoingMail } from '../db/mail-outbox.js'

export type { OutgoingMail }

/**
 * The mails gatehouse sends: plain text plus a simple HTML part of the same words, with the
 * product name and nothing else — no images, no tracking pixel, no rewritten links. Every value
 * put into the HTML is escaped; the text part carries values as they are.
 */
const PRODUCT = 'gatehouse'

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)
}

/** A paragraph of the HTML part: plain text, or text with one link (shown whole, so the reader sees where it goes). */
type Block = string | { link: string } | { code: string }

function renderText (blocks: Block[]): string {
  const lines = blocks.map((b) => typeof b === 'string' ? b : 'link' in b ? b.link : b.code)
  return `${lines.join('\n\n')}\n\n-- \n${PRODUCT}\n`
}

function renderHtml (subject: string, blocks: Block[]): string {
  const paragraphs = blocks.map((b) => {
    if (typeof b === 'string') return `<p>${escapeHtml(b)}</p>`
    if ('link' in b) return `<p><a href="${escapeHtml(b.link)}">${escapeHtml(b.link)}</a></p>`
    return `<p style="font-size:1.5em;font-family:monospace;letter-spacing:0.2em">${escapeHtml(b.code)}</p>`
  })
  return '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>' + escapeHtml(subject) + '</title></head>\n' +
    '<body style="font-family:sans-serif;line-height:1.5">\n' + paragraphs.join('\n') +
    `\n<p style="color:#666">&#8212; ${PRODUCT}</p>\n</body></html>\n`
}

function mail (to: string, subject: string, blocks: Block[]): OutgoingMail {
  return { to, subject, text: renderText(blocks), html: renderHtml(subject, blocks) }
}

function minutes (n: number): string {
  return n === 1 ? '1 minute' : `${n} minutes`
}

const NOT_YOU = 'If you did not ask for this, you can ignore this mail; nothing changes.'

export function passwordResetMail ({ to, link, expiresInMinutes }: { to: string, link: string, expiresInMinutes: number }): OutgoingMail {
  return mail(to, `Reset your ${PRODUCT} password`, [
    `Someone asked to reset the password of the ${PRODUCT} account of ${to}. To choose a new password, open this link:`,
    { link },
    `The link works once, within ${minutes(expiresInMinutes)}. ${NOT_YOU}`
  ])
}

export function emailCodeMail ({ to, code, purpose, expiresInMinutes }: { to: string, code: string, purpose: 'login' | 'verify_email', expiresInMinutes: number }): OutgoingMail {
  const action = purpose === 'login' ? `sign in to ${PRODUCT}` : `confirm this address for ${PRODUCT}`
  return mail(to, purpose === 'login' ? `Your ${PRODUCT} sign-in code` : `Confirm your email address for ${PRODUCT}`, [
    `Your code to ${action}:`,
    { code },
    `It works once, within ${minutes(expiresInMinutes)}. Never give it to anyone. ${NOT_YOU}`
  ])
}

export function passwordChangedMail ({ to }: { to: string }): OutgoingMail {
  return mail(to, `Your ${PRODUCT} password was changed`, [
    `The password of the ${PRODUCT} account of ${to} was just changed, and every session of the account was signed out.`,
    'If you did not do this, reset your password now and tell your administrator.'
  ])
}

/** A security notice for any later feature: `what` is one sentence saying what happened to the account. */
export function securityNoticeMail ({ to, what }: { to: string, what: string }): OutgoingMail {
  return mail(to, `Security notice for your ${PRODUCT} account`, [
    what,
    'If this was not you, reset your password now and tell your administrator.'
  ])
}
