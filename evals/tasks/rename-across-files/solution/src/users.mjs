// How a user's name is shown everywhere in the app.
export function displayName(user) {
  return `${user.first} ${user.last}`.trim();
}
