import t from 'tap'
import { RenderedPages } from '../../../src/portal/rendered-pages.js'

t.test('one rendering per model, the token put in its place each time', async (t) => {
  const pages = new RenderedPages()
  let renders = 0
  const draw = (token: string): string => { renders++; return `<form><input name="csrf" value="${token}"></form>` }
  t.equal(pages.render('login', 'A'.repeat(43), draw), `<form><input name="csrf" value="${'A'.repeat(43)}"></form>`)
  t.equal(pages.render('login', 'B'.repeat(43), draw), `<form><input name="csrf" value="${'B'.repeat(43)}"></form>`)
  t.equal(renders, 1, 'the second is two joins')
  t.equal(pages.render('other', 'C', draw), '<form><input name="csrf" value="C"></form>')
  t.equal(renders, 2, 'another model, another rendering')
})

t.test('bounded: past the limit the oldest rendering goes', async (t) => {
  const pages = new RenderedPages(2)
  const seen: string[] = []
  const draw = (key: string) => (token: string): string => { seen.push(key); return `${key}:${token}` }
  pages.render('a', 't', draw('a'))
  pages.render('b', 't', draw('b'))
  pages.render('c', 't', draw('c'))
  pages.render('b', 't', draw('b'))
  pages.render('a', 't', draw('a'))
  t.same(seen, ['a', 'b', 'c', 'a'], 'b was kept, a had to be drawn again')
})

t.test('a rendering without the placeholder once exactly is never kept (the negative control of the cut)', async (t) => {
  const pages = new RenderedPages()
  let renders = 0
  const twice = (token: string): string => { renders++; return `${token}|${token}` }
  t.equal(pages.render('twice', 'x', twice), 'x|x')
  t.equal(pages.render('twice', 'y', twice), 'y|y')
  t.equal(renders, 2)
  const none = (): string => { renders++; return 'no form' }
  t.equal(pages.render('none', 'x', none), 'no form')
  t.equal(pages.render('none', 'x', none), 'no form')
  t.equal(renders, 4)
  t.match(pages.placeholder, /^[A-Za-z0-9_-]{43}$/)
  t.not(new RenderedPages().placeholder, pages.placeholder, 'random per process')
})
