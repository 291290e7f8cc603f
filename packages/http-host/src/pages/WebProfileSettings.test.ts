import { describe, expect, it } from "vitest"
import { openJourney, poll } from "./webJourney.js"

// Profile settings through the web application's pages (packages/web): a person edits the acting
// profile (name, type, about, skills, contacts, public), a visitor then sees it at /u/{uuid};
// a stale save is refused and changes nothing; another profile is created and switched to.

const world = openJourney({ label: "web_profile", shots: "web-more", subnet: 101 })

describe("profile settings through the pages", { timeout: 900_000 }, () => {
  it("edit the acting profile → public page shows it → a stale save is refused → another profile, switched to", async () => {
    const { origin, person, checkPage } = world
    const [owner, visitor] = await Promise.all([
      person(`owner.web-profile.${Date.now()}@example.com`),
      person(`visitor.web-profile.${Date.now()}@example.com`)
    ])
    const o = owner.tab
    // From the account page; /settings stands for its profile section.
    await o.goto(`${origin}/account?lang=en`)
    await o.getByRole("link", { name: "Profile settings" }).click()
    await o.waitForURL(`${origin}/settings/profile?lang=en`)
    const redirected = await fetch(`${origin}/settings?lang=ru`, { redirect: "manual" })
    expect([redirected.status, redirected.headers.get("location")]).toEqual([303, "/settings/profile?lang=ru"])
    // A new account's profile is private: no public page yet.
    expect(await o.getByRole("link", { name: "Open the public page" }).count()).toBe(0)
    await checkPage(o, "profile-settings", "/settings/profile")

    await o.getByLabel("Name", { exact: true }).first().fill("Nadia Ivanova")
    await o.getByLabel("Profile type").first().selectOption("Самозанятый")
    await o.getByLabel("About").fill("Front-end developer: landing pages and shops.")
    await o.getByLabel("Skills").fill("layout, React , , TypeScript")
    await o.getByLabel("Contacts", { exact: true }).fill("Telegram @nadia_dev")
    await o.getByLabel("Show my contacts to everyone").check()
    await o.getByLabel("Public profile").check()
    await o.getByRole("button", { name: "Save the profile" }).click()
    await o.getByText("The profile is saved.").waitFor()
    // Kept: the page shows what was saved, read again from the service.
    expect(await o.getByLabel("Skills").inputValue()).toBe("layout, React, TypeScript")
    expect(await o.getByLabel("Public profile").isChecked()).toBe(true)
    expect(await o.locator("#session").textContent()).toBe("Signed in as Nadia Ivanova")
    const publicHref = await o.getByRole("link", { name: "Open the public page" }).getAttribute("href")
    const ownerUuid = new URL(publicHref ?? "", origin).pathname.slice("/u/".length)

    // Someone else sees the public profile with all of it.
    const v = visitor.tab
    await v.goto(`${origin}/u/${ownerUuid}?lang=en`)
    const main = await v.locator("main").innerText()
    for (const shown of ["Nadia Ivanova", "Self-employed", "Front-end developer: landing pages and shops.", "layout, React, TypeScript", "Telegram @nadia_dev"]) {
      expect(main).toContain(shown)
    }

    // A save from a page read before the last save is refused; nothing of it is kept.
    const stale = await owner.context.newPage()
    await stale.goto(`${origin}/settings/profile?lang=en`)
    await o.goto(`${origin}/settings/profile?lang=en`)
    await o.getByLabel("About").fill("Front-end developer and designer.")
    await o.getByRole("button", { name: "Save the profile" }).click()
    await o.getByText("The profile is saved.").waitFor()
    await stale.waitForLoadState("networkidle")
    await stale.getByLabel("About").fill("Overwritten from an old page.")
    await stale.getByLabel("Public profile").uncheck()
    await stale.getByRole("button", { name: "Save the profile" }).click()
    await stale.getByText("Someone saved this after you opened the page (in another tab, or a moderator decided on it). Nothing was saved: reload to see the current version.").waitFor()
    await stale.close()
    await v.reload()
    expect(await v.locator("main").innerText()).toContain("Front-end developer and designer.")

    // Private again: the public page is gone for others.
    await o.goto(`${origin}/settings/profile?lang=en`)
    await o.getByLabel("Public profile").uncheck()
    await o.getByRole("button", { name: "Save the profile" }).click()
    await o.getByText("The profile is saved.").waitFor()
    expect((await v.goto(`${origin}/u/${ownerUuid}?lang=en`))?.status()).toBe(404)

    // Another profile of the account: created, listed, switched to; the settings then edit it.
    await o.getByLabel("Name", { exact: true }).last().fill("Ivanova Studio")
    await o.getByLabel("Profile type").last().selectOption("Компания")
    await o.getByRole("button", { name: "Create the profile" }).click()
    await o.getByText("The new profile is created").waitFor()
    await checkPage(o, "profile-settings-two", "/settings/profile")
    await o.getByRole("button", { name: "Switch to “Ivanova Studio”" }).click()
    await poll(() => o.locator("#profile-heading").textContent()).toBe("The acting profile: Ivanova Studio")
    expect(await o.locator("#session").textContent()).toBe("Signed in as Ivanova Studio")
    expect(await o.getByLabel("Profile type").first().inputValue()).toBe("Компания")
    expect(await o.getByLabel("Public profile").isChecked()).toBe(false)

    // Without a session: to sign in and back.
    const anonymous = await fetch(`${origin}/settings/profile?lang=en`, { redirect: "manual" })
    expect([anonymous.status, anonymous.headers.get("location")]).toEqual([303, `/sign-in?lang=en&next=${encodeURIComponent("/settings/profile?lang=en")}`])
    expect([...owner.errors, ...visitor.errors]).toEqual([])
    await Promise.all([owner.context.close(), visitor.context.close()])
  })
})
