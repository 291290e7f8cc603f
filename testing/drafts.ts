/** A task draft that passes every check of `tasks.save` (spec TaskData), for tests that need one saved. */
export const taskDraft = {
  title: "Перевести инструкцию",
  category: "Сайты",
  description: "Нужно перевести инструкцию по сборке станка с немецкого на русский, 12 страниц",
  budget: "до 5 000 ₽",
  deadline: "неделя",
  files: []
}
