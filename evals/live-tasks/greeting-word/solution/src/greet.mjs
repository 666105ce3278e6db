// greet(name): the greeting shown to a user.
export function greet(name) {
  return "Hello, " + name + "!";
}
