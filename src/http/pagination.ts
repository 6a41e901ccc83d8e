/** PaginationMeta from the seed's formulas, applied as written (docs/api.md#userlistresponse): every paged list uses it. */
export function paginationMeta (page: number, perPage: number, total: number) {
  return {
    current_page: page,
    per_page: perPage,
    total,
    last_page: Math.ceil(total / perPage),
    from: (page - 1) * perPage + 1,
    to: page * perPage
  }
}
