// How a user's name is shown everywhere in the app.
export function getUserName(user) {
  return `${user.first} ${user.last}`.trim();
}
